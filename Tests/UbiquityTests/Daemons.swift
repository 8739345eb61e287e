import Foundation
import Testing
import Ubiquity
import UbiqCore
import UbiqTesting
#if canImport(Glibc)
import Glibc
#endif

/// The product as a user runs it: a `ubiq server` process, and devices signed in with
/// `ubiq login` into homes of their own, each with a `ubiq daemon` process, which programs reach
/// through the library. (Processes throughout: the waits on them block a thread, which must
/// not be one an in-process server needs.)
final class Daemons: @unchecked Sendable {
    private(set) var server: ChildProcess
    let baseURL: String
    let port: Int
    let dir: TempDirectory
    private(set) var running: [String: ChildProcess] = [:]

    private init(server: ChildProcess, port: Int, dir: TempDirectory) {
        self.server = server; self.port = port; self.baseURL = "http://127.0.0.1:\(port)"; self.dir = dir
    }

    /// A server with alice (and `others`; password "pw") and signed-in homes for `devices`
    /// (alice's), each with a daemon running.
    static func start(_ devices: [String], others: [String] = []) async throws -> Daemons {
        let dir = try TempDirectory("ubiq-lib")
        let data = dir.url.appendingPathComponent("server").path
        for user in ["alice"] + others {
            let (added, _, why) = try ChildProcess.runUbiq(["server", "user", "add", user, "--password-stdin", "--data", data], stdin: "pw\n")
            guard added == 0 else { throw CoreError(.internalError, "user add failed: \(why)") }
        }
        let (server, port) = try ChildProcess.startUbiqServer(data: data)
        let d = Daemons(server: server, port: port, dir: dir)
        for name in devices {
            try d.login(name, as: "alice")
            try d.startDaemon(name)
        }
        return d
    }

    /// `body` with daemons for `devices`, stopped and removed afterwards whatever happens.
    static func with(_ devices: [String], others: [String] = [], _ body: (Daemons) async throws -> Void) async throws {
        let d = try await start(devices, others: others)
        do { try await body(d) } catch {
            await d.stop()
            throw error
        }
        await d.stop()
    }

    /// `ubiq login` of home `name` as `user` (another account than the home's: it signs out first).
    func login(_ name: String, as user: String) throws {
        let (s, _, e) = try ChildProcess.runUbiq(["login", baseURL, "--user", user, "--password-stdin", "--device", name, "--home", home(name).path],
                                                 stdin: "pw\n")
        guard s == 0 else { throw CoreError(.internalError, "login \(name) as \(user) failed: \(e)") }
    }

    /// Stops the server (SIGTERM; devices find it unreachable).
    func stopServer() {
        server.signal(SIGTERM)
        server.wait(timeout: 30)
    }

    /// Starts the server again on its port, with its data.
    func startServer() throws {
        server = try ChildProcess.startUbiqServer(data: dir.url.appendingPathComponent("server").path, port: port).0
    }

    func home(_ name: String) -> URL { dir.url.appendingPathComponent("home-\(name)") }
    func ubiquity(_ name: String) -> Ubiquity { Ubiquity(home: home(name)) }
    func folder(_ name: String) -> URL { home(name).appendingPathComponent("Ubiquity/iCloud.default") }

    func startDaemon(_ name: String) throws {
        let p = try ChildProcess(ChildProcess.ubiqBinary(), ["daemon", "--home", home(name).path])
        guard p.waitForOutput(timeout: 60, { $0.contains("syncing") }) != nil else { throw CoreError(.internalError, "daemon \(name) did not start: \(p.stderr)") }
        running[name] = p
    }

    /// Stops a daemon as `systemctl stop` would (SIGTERM) and waits for it.
    func stopDaemon(_ name: String) {
        running[name]?.signal(SIGTERM)
        running[name]?.wait(timeout: 30)
        running[name] = nil
    }

    func socketPath(_ name: String) -> String { home(name).appendingPathComponent("state/daemon.sock").path }

    func stop() async {
        for name in running.keys { stopDaemon(name) }
        server.signal(SIGTERM)
        server.wait(timeout: 30)
        dir.remove()
    }
}

/// Notifications a running query or stream delivered, for a test to wait on.
final class Collected<T: Sendable>: @unchecked Sendable {
    private var items: [T] = []
    private let lock = NSLock()
    func add(_ t: T) { lock.lock(); items.append(t); lock.unlock() }
    var all: [T] { lock.lock(); defer { lock.unlock() }; return items }
}
