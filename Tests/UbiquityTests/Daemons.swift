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
    let server: ChildProcess
    let baseURL: String
    let dir: TempDirectory
    private(set) var running: [String: ChildProcess] = [:]

    private init(server: ChildProcess, baseURL: String, dir: TempDirectory) { self.server = server; self.baseURL = baseURL; self.dir = dir }

    /// A server with alice (password "pw") and signed-in homes for `devices`, each with a
    /// daemon running.
    static func start(_ devices: [String]) async throws -> Daemons {
        let dir = try TempDirectory("ubiq-lib")
        let data = dir.url.appendingPathComponent("server").path
        let (added, _, why) = try ChildProcess.runUbiq(["server", "user", "add", "alice", "--password-stdin", "--data", data], stdin: "pw\n")
        guard added == 0 else { throw CoreError(.internalError, "user add failed: \(why)") }
        let (server, port) = try ChildProcess.startUbiqServer(data: data)
        let d = Daemons(server: server, baseURL: "http://127.0.0.1:\(port)", dir: dir)
        for name in devices {
            let (s, _, e) = try ChildProcess.runUbiq(["login", d.baseURL, "--user", "alice", "--password-stdin", "--device", name, "--home", d.home(name).path],
                                                     stdin: "pw\n")
            guard s == 0 else { throw CoreError(.internalError, "login \(name) failed: \(e)") }
            try d.startDaemon(name)
        }
        return d
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
