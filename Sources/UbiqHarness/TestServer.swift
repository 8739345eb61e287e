import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import UbiqClient
import UbiqCore
import UbiqServer
import UbiqStorage

/// A real server on a loopback port (port 0, so tests never collide), with a real SQLite file and
/// chunk folder in a temp directory. In-process, so a test can also reach its stores.
public final class TestServer: Sendable {
    public let directory: TempDirectory
    public let services: ServerServices
    public let port: Int
    /// For a server started with TLS: the certificate its clients must trust (PEM).
    public let trusted: String?
    /// Where its metadata is (a PostgreSQL test database is dropped at `stop()`).
    public let database: MetadataLocation
    /// Its recent log lines (requests at info, warnings and errors).
    public let log: RingLog
    let group: ServiceGroup
    let task: Task<Void, Error>

    public var baseURL: String { "\(trusted == nil ? "http" : "https")://127.0.0.1:\(port)" }

    /// Starts a server on `wanted`, or on a random port below the kernel's ephemeral range
    /// (so a port freed by `stop` for a restart is not handed to some client connection of a
    /// test running meanwhile). Binding is retried: on a random port with another port, on a
    /// wanted one after a short wait (a connection of the stopped server may still hold it).
    public static func start(directory: TempDirectory? = nil, port wanted: Int = 0,
                             headTimeout: Duration = .seconds(30), idleTimeout: Duration = .seconds(120), maxConnections: Int = 1000,
                             maxConnectionsPerAddress: Int? = nil, bodyRate: BodyRate = BodyRate(), pushPing: Duration = .seconds(30),
                             tls: TestCertificates? = nil, clock: @escaping @Sendable () -> Date = { Date() },
                             database: MetadataLocation = .sqlite, blobs: BlobStoreLocation = .folder, keyFile: String? = nil,
                             configure: @escaping @Sendable (inout ServerServices) -> Void = { _ in }) async throws -> TestServer {
        let dir = try directory ?? TempDirectory("ubiq-server")
        // Servers sharing a PostgreSQL database share its key file (as a fleet must).
        var keyFile = keyFile
        if keyFile == nil, case .postgres(let pg) = database {
            keyFile = TestDatabaseDrop.keyFile(of: pg)
        }
        // The stores open once (a failure there is the test's answer, not a port to try again).
        var services = blobs == .folder && database == .sqlite ? try await ServerServices.embedded(at: dir.url, keyFile: keyFile, clock: clock)
            : try await ServerServices.open(at: dir.url, database: database, blobs: blobs, keyFile: keyFile, clock: clock)
        // Hundreds of accounts and sign-ins per run: 210,000 rounds each were a good part of the
        // run's CPU. The count is the server's setting; `configure` may set it back.
        services.passwordRounds = 1_000
        configure(&services)
        var lastError: Error = CoreError(.internalError, "test server did not start")
        for attempt in 0..<40 {
            // 20,000–32,000: below the ephemeral range, and apart from `PrivatePostgres`'s ports.
            let port = wanted != 0 ? wanted : Int.random(in: 20_000..<32_000)
            do {
                return try await startOnce(directory: dir, port: port, headTimeout: headTimeout, idleTimeout: idleTimeout, maxConnections: maxConnections,
                                           limits: (maxConnectionsPerAddress, bodyRate, pushPing), tls: tls, services: services, database: database)
            } catch {
                lastError = error
                if wanted != 0 { try await Task.sleep(for: .milliseconds(50 * min(attempt + 1, 10))) }
            }
        }
        await services.close()
        throw lastError
    }

    static func startOnce(directory dir: TempDirectory, port wanted: Int, headTimeout: Duration, idleTimeout: Duration, maxConnections: Int,
                          limits: (perAddress: Int?, bodyRate: BodyRate, pushPing: Duration) = (nil, BodyRate(), .seconds(30)),
                          tls: TestCertificates?, services: ServerServices, database: MetadataLocation) async throws -> TestServer {
        // Warnings to standard error; every request (info) kept in a ring shown when a wait runs out.
        let ring = RingLog(name: "server").registerWithCurrentTest()
        let logger = ring.logger(label: "test.server", fallback: .warning, kept: .info)
        let (portStream, portCont) = AsyncStream<Int>.makeStream()
        let tlsConfiguration = try tls.map { try ServerTLS.configuration(certificatePEM: $0.serverPEM, keyPEM: $0.serverKeyPEM) }
        let app = try UbiqServerApp.make(services: services, host: "127.0.0.1", port: wanted, logger: logger,
                                         headTimeout: headTimeout, idleTimeout: idleTimeout, maxConnections: maxConnections,
                                         maxConnectionsPerAddress: limits.perAddress, bodyRate: limits.bodyRate, pushPing: limits.pushPing,
                                         tls: tlsConfiguration) { port in
            portCont.yield(port)
            portCont.finish()
        }
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task {
            defer { portCont.finish() }  // a server that fails to start ends the wait below
            try await group.run()
        }
        var port = 0
        for await p in portStream { port = p }
        guard port > 0 else {
            // Why: the server's own error (an address in use, a database that would not open).
            let why = await task.result
            if case .failure(let e) = why { throw CoreError(.internalError, "test server did not start: \(e)") }
            throw CoreError(.internalError, "test server did not start")
        }
        return TestServer(directory: dir, services: services, port: port, trusted: tls?.authorityPEM, group: group, task: task, database: database, log: ring)
    }

    init(directory: TempDirectory, services: ServerServices, port: Int, trusted: String?, group: ServiceGroup, task: Task<Void, Error>,
         database: MetadataLocation, log: RingLog) {
        self.database = database
        self.log = log
        self.directory = directory
        self.services = services
        self.port = port
        self.trusted = trusted
        self.group = group
        self.task = task
    }

    /// Stops the server; `keepData` leaves the directory (and a PostgreSQL test database) for a
    /// restart.
    public func stop(keepData: Bool = false) async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        await services.close()
        if !keepData {
            directory.remove()
            if case .postgres(let location) = database { await TestDatabaseDrop.drop(location) }
        }
    }

    /// Creates an account and returns a signed-in client for a new device of it.
    public func user(_ name: String, password: String = "secret-pw", quota: Int64 = 1 << 30) async throws {
        try await services.addUser(name: name, password: password, quota: quota)
    }

    /// A signed-in client for a device of `user`.
    public func device(_ user: String, password: String = "secret-pw", name: String = "laptop") async throws -> (UbiqAPIClient, DeviceID) {
        let (c, r) = try await UbiqAPIClient(baseURL: baseURL, trusting: trusted).login(user: user, password: password, deviceName: name)
        return (c, r.deviceID)
    }
}
