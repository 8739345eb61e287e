import CFileSupport
import Foundation
#if canImport(Glibc)
import Glibc
import UbiqDaemonProtocol
#endif

/// Starting the daemon for a program that finds none, when the user allows it
/// (`autostart = true` in `config.toml`): `ubiq daemon` in a session of its own (it outlives
/// the program; it logs to the home's `ubiq.log`). A home the daemon already holds (a
/// `systemd` service starting up) is not started twice: the second daemon exits at once and
/// the first one's answer is waited for.
struct DaemonStarter: Sendable {
    /// `--home` for the daemon (nil: the standard home).
    let homeArgument: String?
    let autostart: Bool?
    let executable: URL?

    /// Whether to start one: as asked, else as the config file says.
    var enabled: Bool { autostart ?? Self.configAllows() }

    /// `autostart = true` in `$XDG_CONFIG_HOME/ubiquity/config.toml` (else `~/.config/…`). Only
    /// this one key is read, leniently (a line of its own, `true` unquoted, a comment after it
    /// allowed); `ubiq config show` checks the whole file.
    static func configAllows(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
            ?? URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory()).appendingPathComponent(".config")
        let file = base.appendingPathComponent("ubiquity/config.toml")
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: file.path), ((attributes[.size] as? Int) ?? 0) <= 64 << 10,
              let text = try? String(contentsOf: file, encoding: .utf8) else { return false }
        for raw in text.split(separator: "\n") {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0] == "autostart" { return parts[1] == "true" }
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("[") { return false }  // a table: past the top-level keys
        }
        return false
    }

    /// The `ubiq` program: as given, else the first on `PATH` found in an absolute folder that
    /// no other user can write (#45 row 6: a `ubiq` in the working directory, through `.` on
    /// `PATH`, was started detached). `skipped` collects what was passed over.
    func program(skipped: inout [String]) -> String? {
        if let executable { return executable.path }
        var passed: [String] = []
        defer { skipped = passed }
        return ExecutableTrust.search("ubiq", path: ProcessInfo.processInfo.environment["PATH"]) { passed.append($0) }
    }

    /// Starts the daemon and waits (at most 15 s) until it answers.
    func start(waitingFor client: DaemonClient, because why: String) async throws {
        var skipped: [String] = []
        guard let program = program(skipped: &skipped) else {
            let passed = skipped.isEmpty ? "" : " (passed over: \(skipped.joined(separator: "; ")))"
            throw DaemonClient.Failure.noDaemon("\(why); autostart is on but no 'ubiq' program was found in PATH's absolute folders\(passed)")
        }
        var arguments = ["daemon"]
        if let homeArgument { arguments += ["--home", homeArgument] }
        try Self.spawnDetached(program, arguments)
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            if (try? await client.send(.hello(version: DaemonWire.protocolVersion, client: "autostart")))?.hello != nil { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw DaemonClient.Failure.noDaemon("\(why); a daemon was started (\(program) \(arguments.joined(separator: " "))) but did not answer within 15 s")
    }

    /// `program arguments` in a new session, standard streams on /dev/null, not waited for.
    static func spawnDetached(_ program: String, _ arguments: [String]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in Int32(0)...2 { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        // Nothing else of this program goes with it: the daemon outlives the program, and a
        // socket it inherited (SwiftNIO's are not close-on-exec) would stay open as long — a
        // coordination the program ends would never end for the daemon holding its other side.
        let closing = ubiq_spawn_close_from(&actions, 3)
        guard closing == 0 else { throw DaemonClient.Failure.noDaemon("cannot start \(program): \(String(cString: strerror(closing)))") }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(0x80 /* POSIX_SPAWN_SETSID, not in Glibc's module */ | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = [program] + arguments
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, program, &actions, &attributes, &cArgs, environ)
        guard rc == 0 else { throw DaemonClient.Failure.noDaemon("cannot start \(program): \(String(cString: strerror(rc)))") }
        // Reaped when it exits: a thread waits for it (it normally outlives this program).
        let child = pid
        Thread.detachNewThread { var status: Int32 = 0; waitpid(child, &status, 0) }
    }
}
