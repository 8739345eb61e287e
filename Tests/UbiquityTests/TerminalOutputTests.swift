import Foundation
import Testing
import UbiqTesting

extension DaemonSuites {
    /// What the command line prints from elsewhere (a setting another program wrote) cannot
    /// command the terminal it is shown on; piped, it is the exact value.
    @Suite("Terminal output", .serialized, .enabled(if: TmuxSession.available))
    struct TerminalOutputTests {
        /// Clears the screen, sets the window title, turns text around, and a C1 "CSI".
        static let hostile = "red\u{1B}[2J\u{1B}]0;pwned\u{07}\u{202E}txt.exe\u{9B}1m"

        @Test func aValueFromElsewhereIsShownNotObeyed() async throws {
            try await Daemons.with(["A"]) { try await Self.check($0) }
        }

        static func check(_ d: Daemons) async throws {
            let home = d.home("A").path
            let (set, _, setError) = try ChildProcess.runUbiq(["kv", "set", "motd", hostile, "--home", home])
            #expect(set == 0, "\(setError)")

            // Piped: exactly the value (scripts get the real bytes).
            let (got, out, _) = try ChildProcess.runUbiq(["kv", "get", "motd", "--home", home])
            #expect(got == 0 && out == hostile + "\n", "\(out.debugDescription)")
            // --json: the same value, with nothing a terminal would act on left raw.
            let (_, json, _) = try ChildProcess.runUbiq(["kv", "get", "motd", "--json", "--home", home])
            let raw: [Unicode.Scalar] = ["\u{1B}", "\u{07}", "\u{202E}", "\u{9B}"]
            #expect(!json.unicodeScalars.contains { raw.contains($0) }, "\(json.debugDescription)")
            let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
            #expect(object?["value"] as? String == hostile, "the JSON value is the setting's value")

            // On a terminal: shown as `?`, the screen and what was printed before stay.
            let t = try TmuxSession(width: 120, height: 20)
            defer { t.kill() }
            try t.type("echo BEFORE-$((3+4)); \(ChildProcess.ubiqBinary()) kv get motd --home \(home); echo AFTER-$((40+2))")
            try t.send("Enter")
            #expect(t.waitFor("AFTER-42"))
            let screen = t.capture()
            #expect(screen.contains("BEFORE-7"), "the screen was not cleared:\n\(screen)")
            #expect(screen.contains("red?[2J?]0;pwned??txt.exe?1m"), "\(screen)")
        }
    }
}
