import CFileSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Other programs the front end starts: an editor that gets the terminal until it exits, and
/// `xdg-open`, which runs on its own. Started with `posix_spawn` (the signals the front end
/// ignores are reset for them) and waited for with `waitpid` — never a run loop spin.
public enum ExternalProgram {
    /// Runs `argv` on this terminal and waits; its exit status (127 if it could not start).
    public static func runInTerminal(_ argv: [String]) -> Int32 {
        guard let pid = spawn(argv, quietly: false) else { return 127 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Runs `$VISUAL`, else `$EDITOR`, else `vi` on a file, on this terminal, and waits; its
    /// exit status. The variables may hold arguments (`code --wait`), as shells allow.
    public static func edit(_ file: String) -> Int32 {
        runInTerminal(["/bin/sh", "-c", "exec ${VISUAL:-${EDITOR:-vi}} \"$1\"", "ubiq-edit", file])
    }

    /// Starts `argv` detached from the terminal (output to /dev/null) and reaps it in the
    /// background; nil when it started, else why not.
    static func spawn(_ argv: [String], quiet: Bool) -> String? {
        guard let pid = spawn(argv, quietly: quiet) else { return "cannot start \(argv[0]): \(String(cString: strerror(errno)))" }
        Thread { var st: Int32 = 0; while waitpid(pid, &st, 0) < 0 && errno == EINTR {} }.start()
        return nil
    }

    private static func spawn(_ argv: [String], quietly: Bool) -> pid_t? {
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGTSTP] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if quietly {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        // Only the terminal: not the front end's connections (SwiftNIO's sockets are not
        // close-on-exec) — a program opened with xdg-open can outlive the front end, and would
        // keep its daemon streams and server connections open as long.
        let closing = ubiq_spawn_close_from(&actions, 3)
        guard closing == 0 else { errno = closing; return nil }
        var cargs = argv.map { strdup($0) } + [nil]
        defer { for p in cargs { free(p) } }
        var pid = pid_t()
        let rc = posix_spawnp(&pid, argv[0], &actions, &attr, &cargs, environ)
        guard rc == 0 else { errno = rc; return nil }
        return pid
    }
}
