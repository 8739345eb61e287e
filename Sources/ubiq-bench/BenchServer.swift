import Foundation
import Logging
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
import UbiqServer
import UbiqStorage

/// An embedded server on a free loopback port with one account `bench` (password `bench-pw`),
/// its data in a temp folder removed by `stop()`.
struct BenchServer {
    let dir: URL
    let server: EmbeddedServer
    let services: ServerServices
    let logger: Logger
    var port: Int { server.port }

    /// `blobs`: `--blobs` of the server (nil: the data folder's chunks). `database`: a PostgreSQL
    /// server (`postgres://…` whose role may create databases) on which the bench makes a
    /// database of its own, dropped by `stop()` (nil: SQLite in the data folder). `shared`: run
    /// on this database (a second server beside another bench server; it drops nothing).
    /// `unsealed`: for a side-by-side figure only — the server keeps chunks unsealed (a product
    /// server always seals them; see `SealedChunkStore`).
    static func start(label: String, blobs: String? = nil, database: String? = nil, shared: PostgreSQLLocation? = nil, unsealed: Bool = false,
                      maxConnections: Int = 1000, configure: (inout ServerServices) -> Void = { _ in }) async throws -> BenchServer {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ubiq-\(label)-\(UUID().uuidString.prefix(8))")
        let env = ProcessInfo.processInfo.environment
        var made: PostgreSQLLocation?, base: PostgreSQLLocation?
        if let database {
            var pg = try PostgreSQLLocation(parsing: database, environment: env)
            base = pg
            let name = "ubiq_bench_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
            try await PostgreSQLDatabase.administer(pg, ["CREATE DATABASE \(name)"])
            pg.database = name
            made = pg
        }
        let location: MetadataLocation = (shared ?? made).map { .postgres($0) } ?? .sqlite
        var services = try await ServerServices.open(at: dir.appendingPathComponent("server"), database: location,
                                                     blobs: try BlobStoreLocation.parse(blobs, environment: env), environment: env)
        if unsealed, let sealed = services.chunks as? SealedChunkStore {
            services = services.replacingChunks(sealed.inner)
        }
        configure(&services)
        if shared == nil { try await services.addUser(name: "bench", password: "bench-pw", quota: 1 << 40) }
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let server = try await EmbeddedServer.start(services: services, logger: logger, maxConnections: maxConnections,
                                                    maxConnectionsPerAddress: maxConnections)
        return BenchServer(dir: dir, server: server, services: services, logger: logger,
                           made: made, base: base)
    }

    /// The PostgreSQL database this bench made (dropped at `stop`), and the one it was made from.
    var made: PostgreSQLLocation?
    var base: PostgreSQLLocation?
    /// The `bench` account's key when the bench runs on an end-to-end encrypted account
    /// (`--encrypted`: every device signed in holds it).
    var accountKey: AccountKey?

    /// Signs a device of `bench` in (through `port`, e.g. a counting proxy; default the server)
    /// and saves its config in a home under the bench folder.
    func signIn(_ name: String, container: String, port: Int? = nil) async throws -> (DeviceHome, DeviceConfig) {
        let url = "http://127.0.0.1:\(port ?? self.port)"
        let home = DeviceHome.rooted(at: dir.appendingPathComponent("home-\(name)"))
        let (_, r) = try await UbiqAPIClient(baseURL: url).login(user: "bench", password: "bench-pw", deviceName: name)
        var config = DeviceConfig(server: url, user: "bench", deviceID: r.deviceID, deviceName: name,
                                  container: try ContainerID(validating: container), download: .all, token: r.token)
        config.accountKey = accountKey?.text
        try config.save(home)
        return (home, config)
    }

    /// A device's engine (not started) signed in through `port` (default: the server), logging
    /// a millisecond timeline to stderr when `UBIQ_BENCH_DEBUG` is set.
    func device(_ name: String, container: String, port: Int? = nil) async throws -> BenchDevice {
        let (home, config) = try await signIn(name, container: container, port: port)
        var engineLogger = Logger(label: "engine.\(name)")
        engineLogger.logLevel = .error
        if ProcessInfo.processInfo.environment["UBIQ_BENCH_DEBUG"] != nil {
            engineLogger = Logger(label: "engine.\(name)") { TimelineLogHandler(label: $0) }
        }
        let engine = try SyncEngine(home: home, config: config, logger: engineLogger)
        return BenchDevice(engine: engine, home: home, config: config, folder: home.containerFolder(config.container), logger: engineLogger)
    }

    func stop(keepingData: Bool = false) async {
        await server.stop()
        await services.close()
        if !keepingData { try? FileManager.default.removeItem(at: dir) }
        if let made, let base, !keepingData {
            try? await PostgreSQLDatabase.administer(base, ["DROP DATABASE IF EXISTS \(made.database) WITH (FORCE)"])
        }
    }
}

/// One device of a benchmark: its engine, home and container folder.
struct BenchDevice {
    let engine: SyncEngine
    let home: DeviceHome
    let config: DeviceConfig
    let folder: URL
    let logger: Logger
}
