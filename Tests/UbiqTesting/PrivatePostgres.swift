import Foundation
import Testing
import UbiqStorage
#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL server of a test's own (its own data folder and port, from the machine's
/// `postgresql` package), so the test may stop, crash and restart it while the suites beside it
/// keep using the shared one. The postmaster runs in the foreground as this object's child
/// (as the `postgres` user when the tests run as root, through `setpriv`, which execs it in
/// place: the child's pid is the postmaster's). Trust authentication on 127.0.0.1.
public final class PrivatePostgres: @unchecked Sendable {
    public let directory: URL
    public let port: Int
    let bin: String
    let lock = NSLock()
    var server: ChildProcess?

    /// The installed server's programs (the newest version), or nil.
    public static var binaries: String? {
        let base = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        guard let newest = versions.compactMap({ Int($0) }).max() else { return nil }
        let bin = "\(base)/\(newest)/bin"
        return FileManager.default.isExecutableFile(atPath: bin + "/postgres") ? bin : nil
    }

    /// Whether tests of a private server run: PostgreSQL tests run and the server is installed.
    public static var runs: Bool { PostgresTestDatabase.runs }

    /// The database URL the servers use (the `postgres` database as the `postgres` role).
    public var location: PostgreSQLLocation {
        get throws { try PostgreSQLLocation(parsing: "postgres://postgres@127.0.0.1:\(port)/postgres?connections=8") }
    }

    /// Makes a new cluster (initdb) and starts it; nil, with an issue recorded, when PostgreSQL
    /// is not installed.
    public static func start() throws -> PrivatePostgres? {
        guard let bin = binaries else {
            Issue.record("PostgreSQL is not installed (apt-get install postgresql; .ci/run does)")
            return nil
        }
        let dir = URL(fileURLWithPath: "/tmp/ubiq-private-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let pg = PrivatePostgres(directory: dir, port: try freePort(), bin: bin)
        if getuid() == 0 {
            guard let pw = getpwnam("postgres") else {
                throw pg.failure("no 'postgres' user (the postgresql package makes it)")
            }
            chown(dir.path, pw.pointee.pw_uid, pw.pointee.pw_gid)
        }
        let initdb = try pg.spawn("initdb", ["-D", pg.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"])
        guard initdb.wait(timeout: 120) == 0 else { throw pg.failure("initdb failed: \(initdb.stderr.suffix(400))") }
        let conf = """

            listen_addresses = '127.0.0.1'
            port = \(pg.port)
            unix_socket_directories = '\(dir.path)'
            fsync = on
            max_connections = 60
            shared_buffers = 32MB
            log_min_messages = warning

            """
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: pg.data + "/postgresql.conf"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(conf.utf8))
        try handle.close()
        try pg.startServer()
        return pg
    }

    init(directory: URL, port: Int, bin: String) {
        self.directory = directory; self.port = port; self.bin = bin
    }

    var data: String { directory.path + "/data" }

    /// Starts the postmaster and waits (at most 60 s) until it takes connections.
    public func startServer() throws {
        let p = try spawn("postgres", ["-D", data])
        lock.withLock { server = p }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if ready(pid: p.pid) { return }
            var status: Int32 = 0
            if waitpid(p.pid, &status, WNOHANG) == p.pid { throw failure("postgres exited: \(p.stderr.suffix(600))") }
            usleep(50_000)
        }
        p.signal(SIGKILL)
        p.wait()
        throw failure("postgres did not take connections in 60 s: \(p.stderr.suffix(600))")
    }

    /// How the server is stopped: `fast` (SIGINT: sessions ended, a clean shutdown) or
    /// `immediate` (SIGQUIT: no checkpoint, recovery from the log at the next start — what a
    /// crash leaves).
    public enum Shutdown: Sendable { case fast, immediate }

    /// Stops the postmaster (its sessions end with it) and waits until it has exited.
    public func stopServer(_ how: Shutdown) {
        guard let p = lock.withLock({ () -> ChildProcess? in defer { server = nil }; return server }) else { return }
        p.signal(how == .fast ? SIGINT : SIGQUIT)
        p.wait(timeout: 60)
    }

    /// Stops the server and removes its folder.
    public func destroy() {
        stopServer(.immediate)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Whether the postmaster `pid` (ours) says it is ready and something listens on the port.
    /// Not the port alone: a test server that took the port while the database was down looked
    /// like a database that never answered (#45 §4: both servers answered `storage_failure` for
    /// minutes after a restart in a full run) — `postmaster.pid` names the process and its state.
    func ready(pid: pid_t) -> Bool {
        guard let text = try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8) else { return false }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard lines.first == String(pid), lines.contains("ready") else { return false }
        return Self.onLoopback(port) { fd, address, length in connect(fd, address, length) } == 0
    }

    /// The postmaster as a failed wait should report it: its pid, whether it runs, the end of
    /// what it wrote to stderr.
    public var state: String {
        guard let p = lock.withLock({ server }) else { return "private PostgreSQL on port \(port): stopped" }
        let alive = kill(p.pid, 0) == 0 && (try? String(contentsOfFile: "/proc/\(p.pid)/stat", encoding: .utf8))?.contains(") Z ") != true
        return "private PostgreSQL on port \(port): postmaster \(p.pid) \(alive ? "running" : "gone"); stderr: \(p.stderr.suffix(800))"
    }

    /// One of the server's programs, as the `postgres` user when we are root.
    func spawn(_ program: String, _ arguments: [String]) throws -> ChildProcess {
        var env = ProcessInfo.processInfo.environment
        env["LC_ALL"] = "C.UTF-8"
        if getuid() == 0 {
            return try ChildProcess("/usr/bin/setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", "\(bin)/\(program)"] + arguments,
                                    environment: env)
        }
        return try ChildProcess("\(bin)/\(program)", arguments, environment: env)
    }

    func failure(_ why: String) -> Error {
        try? FileManager.default.removeItem(at: directory)
        return NSError(domain: "PrivatePostgres", code: 1, userInfo: [NSLocalizedDescriptionKey: "private PostgreSQL: \(why)"])
    }

    /// A port nothing listens on now (bound and let go), from a range no other test picks from:
    /// `TestServer` takes 20,000–32,000, and a test server started while the database is down
    /// must never take its port (#45 §4).
    static func freePort() throws -> Int {
        for _ in 0..<200 {
            let candidate = Int.random(in: 12_000..<13_000)
            if onLoopback(candidate, { fd, address, length in bind(fd, address, length) }) == 0 { return candidate }
        }
        throw NSError(domain: "PrivatePostgres", code: 2, userInfo: [NSLocalizedDescriptionKey: "no free port"])
    }

    /// `call` (connect or bind) on a fresh TCP socket with 127.0.0.1:`port`, closed after; its
    /// result (-1 when no socket could be made).
    static func onLoopback(_ port: Int, _ call: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    }
}

extension PrivatePostgres {
    /// Freezes the server (SIGSTOP to the postmaster and every backend): connections stay open
    /// and nothing answers — a database behind a partition that sends no reset. `false` thaws it.
    public func freeze(_ on: Bool) {
        guard let postmaster = lock.withLock({ server?.pid }) else { return }
        var pids = [postmaster]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), Self.parent(of: pid) == postmaster else { continue }
            pids.append(pid)
        }
        for pid in pids { kill(pid, on ? SIGSTOP : SIGCONT) }
    }

    /// The parent of a process (from `/proc/PID/stat`: the field after the name in parentheses).
    static func parent(of pid: pid_t) -> pid_t? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? pid_t(fields[1]) : nil
    }
}
