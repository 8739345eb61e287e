import CFileSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, with an empty signal mask and default signal
/// dispositions (a child spawned from a Dispatch or Swift-concurrency thread would otherwise
/// inherit a mask that blocks SIGTERM and friends). Its stdout and stderr go to files.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    public let stdoutPath: String
    public let stderrPath: String
    /// The folder holding its stdin, stdout and stderr files, removed with this object.
    let directory: URL

    /// Starts `executable` with `arguments`; `stdin` (if given) is written to its standard input.
    public init(_ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ubiq-child-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        directory = dir
        stdoutPath = dir.appendingPathComponent("stdout").path
        stderrPath = dir.appendingPathComponent("stderr").path
        let stdinPath = dir.appendingPathComponent("stdin").path
        _ = FileManager.default.createFile(atPath: stdinPath, contents: Data((stdin ?? "").utf8))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdinPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // None of the test process's sockets and files (NIO's are not close-on-exec): a server
        // or daemon holding a copy of a connection a test closed would never see it close.
        _ = ubiq_spawn_close_from(&actions, 3)

        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let env = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = [executable] + arguments
        var cArgs = argv.map { strdup($0) } + [nil]
        var cEnv = env.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) }; cEnv.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attr, &cArgs, &cEnv)
        guard rc == 0 else {
            try? FileManager.default.removeItem(at: dir)
            throw NSError(domain: "ChildProcess", code: Int(rc), userInfo: [NSLocalizedDescriptionKey: "spawn \(executable): \(String(cString: strerror(rc)))"])
        }
        pid = child
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    public var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    public func signal(_ sig: Int32) { kill(pid, sig) }

    /// Waits for exit, at most `timeout` seconds (then SIGKILL); returns the exit status (128+signal if killed).
    @discardableResult
    public func wait(timeout: TimeInterval = 60) -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 { return -1 }
            if Date() > deadline { kill(pid, SIGKILL); waitpid(pid, &status, 0); break }
            usleep(10_000)
        }
        if status & 0x7F == 0 { return (status >> 8) & 0xFF }
        return 128 + (status & 0x7F)
    }

    /// Polls stdout until `predicate` holds, at most `timeout` seconds; returns the stdout seen.
    public func waitForOutput(timeout: TimeInterval = 60, _ predicate: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let out = stdout
            if predicate(out) { return out }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { return predicate(stdout) ? stdout : nil }
            usleep(20_000)
        }
        return nil
    }

    /// The `ubiq` binary built next to the test bundle.
    public static func ubiqBinary() -> String {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("ubiq").path,
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(".build/debug/ubiq").path,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates.last!
    }

    /// Runs `ubiq` to completion and returns (status, stdout, stderr).
    public static func runUbiq(_ args: [String], stdin: String? = nil, environment: [String: String]? = nil, timeout: TimeInterval = 120) throws -> (Int32, String, String) {
        let p = try ChildProcess(ubiqBinary(), args, stdin: stdin, environment: environment)
        let status = p.wait(timeout: timeout)
        return (status, p.stdout, p.stderr)
    }
}

extension ChildProcess {
    /// Starts `ubiq server --data DATA --listen 127.0.0.1:PORT` (0: a free port) and waits until
    /// it listens; returns the process and the bound port.
    public static func startUbiqServer(data: String, port: Int = 0) throws -> (ChildProcess, Int) {
        let p = try ChildProcess(ubiqBinary(), ["server", "--data", data, "--listen", "127.0.0.1:\(port)", "--log-level", "error"])
        guard let out = p.waitForOutput(timeout: 60, { $0.contains("listening on") }),
              let r = out.range(of: "http://127.0.0.1:"), let bound = Int(out[r.upperBound...].prefix { $0.isNumber }) else {
            p.signal(SIGKILL); p.wait()
            throw NSError(domain: "ubiq", code: 1, userInfo: [NSLocalizedDescriptionKey: "server did not start: \(p.stderr)"])
        }
        return (p, bound)
    }
}
