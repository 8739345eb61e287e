import Foundation

/// A private tmux server with one session running a shell: the front end is started in it,
/// driven with `send-keys` and read with `capture-pane` (platform notes §1.6–1.7: spawned
/// with posix_spawn and an empty signal mask; `TMUX` removed from the environment).
public final class TmuxSession: @unchecked Sendable {
    public let socket: String
    let env: [String: String]
    /// `XDG_STATE_HOME` in the session (removed with it).
    public let stateHome: String

    public init(width: Int = 100, height: Int = 30, environment extra: [String: String] = [:]) throws {
        socket = "ubiq-test-\(getpid())-\(UUID().uuidString.prefix(6))"
        var env = ProcessInfo.processInfo.environment
        env["TMUX"] = nil
        env["NO_COLOR"] = nil  // the test runner may set it; a test that wants it says so
        env["LANG"] = "C.UTF-8"
        env["LC_ALL"] = "C.UTF-8"
        // The front end remembers its last folder under XDG_STATE_HOME: a place of the session's
        // own, never the user's.
        stateHome = NSTemporaryDirectory() + "ubiq-tmux-state-\(socket)"
        env["XDG_STATE_HOME"] = stateHome
        for (k, v) in extra { env[k] = v }
        self.env = env
        let (st, _, err) = try tmux(["new-session", "-d", "-s", "t", "-x", "\(width)", "-y", "\(height)", "bash --norc --noprofile"])
        guard st == 0 else { throw NSError(domain: "tmux", code: Int(st), userInfo: [NSLocalizedDescriptionKey: "tmux new-session failed: \(err)"]) }
        try send("PS1='$ '; clear", "Enter")
    }

    public static var available: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") }

    @discardableResult
    func tmux(_ args: [String]) throws -> (Int32, String, String) {
        let p = try ChildProcess("/usr/bin/tmux", ["-L", socket, "-f", "/dev/null"] + args, environment: env)
        let st = p.wait(timeout: 30)
        return (st, p.stdout, p.stderr)
    }

    /// Keys by tmux name (`Enter`, `Escape`, `Up`, `C-c`) or plain characters.
    public func send(_ keys: String...) throws { try tmux(["send-keys", "-t", "t"] + keys) }

    /// Literal text (UTF-8 included).
    public func type(_ text: String) throws { try tmux(["send-keys", "-t", "t", "-l", text]) }

    /// The visible screen as text (`escapes`: with SGR colour and attribute sequences).
    public func capture(escapes: Bool = false) -> String { (try? tmux(["capture-pane", "-p"] + (escapes ? ["-e"] : []) + ["-t", "t"]).1) ?? "" }

    /// Polls the screen until `condition` holds (bounded); returns whether it did.
    public func waitFor(timeout: TimeInterval = 20, _ condition: (String) -> Bool) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if condition(capture()) { return true }
            usleep(50_000)
        }
        return condition(capture())
    }

    public func waitFor(_ text: String, timeout: TimeInterval = 20) -> Bool { waitFor(timeout: timeout) { $0.contains(text) } }

    public func resize(width: Int, height: Int) throws { try tmux(["resize-window", "-t", "t", "-x", "\(width)", "-y", "\(height)"]) }

    /// The newest paste buffer (what a program copied with OSC 52, once `set-clipboard` is on).
    public func pasteBuffer() -> String { (try? tmux(["show-buffer"]).1) ?? "" }

    /// Lets programs in the session set tmux's paste buffers (OSC 52).
    public func acceptClipboard() throws { _ = try tmux(["set-option", "-g", "set-clipboard", "on"]) }

    /// Starts the front end (`ubiq tui --home HOME`) in the session's shell, after `prefix`
    /// (`clear; `, `NO_COLOR=1 `…); the shell prints `MARKER=status` when it ends.
    public func startFrontEnd(home: String, prefix: String = "", marker: String = "EXIT") throws {
        try send("\(prefix)\(ChildProcess.ubiqBinary()) tui --home \(home); echo \(marker)=$?", "Enter")
    }

    /// `q` to a front end, and `y` when it asks first (it runs the engine itself and changes
    /// still wait to go up — on a busy machine they may); true once `done` holds.
    public func quitFrontEnd(timeout: TimeInterval = 20, until done: @escaping (String) -> Bool) -> Bool {
        guard (try? send("q")) != nil else { return false }
        guard waitFor(timeout: timeout, { $0.contains("Quit?") || done($0) }) else { return false }
        if capture().contains("Quit?") { _ = try? send("y") }
        return waitFor(timeout: timeout, done)
    }

    /// `quitFrontEnd` until the screen shows `marker` (the shell's `echo EXIT=$?`).
    public func quitFrontEnd(_ marker: String, timeout: TimeInterval = 20) -> Bool {
        quitFrontEnd(timeout: timeout) { $0.contains(marker) }
    }

    public func kill() {
        _ = try? tmux(["kill-server"])
        try? FileManager.default.removeItem(atPath: stateHome)
    }
}
