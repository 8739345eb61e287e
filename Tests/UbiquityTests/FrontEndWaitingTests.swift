import Foundation
import Testing
import UbiqDaemonProtocol
import Ubiquity
import UbiqCore
import UbiqEngine
import UbiqTesting

extension DaemonSuites {
    /// #44 rows 2 and 4: paused, edited files kept `✓` and new ones did not appear; offline,
    /// the status line said `‖ offline` alone while `ubiq status` said nothing was queued and the
    /// front end listed a file as waiting. Now the folder is read while paused, and the front end
    /// and `ubiq status` say the same count of waiting changes online, paused and offline.
    @Suite("Front end: what waits", .serialized)
    struct FrontEndWaitingTests {
        /// `ubiq status --json` of device A.
        static func status(_ d: Daemons) throws -> EngineStatus {
            let (code, out, err) = try ChildProcess.runUbiq(["status", "--json", "--home", d.home("A").path])
            guard code == 0 else { throw CLIFailure(message: err) }
            return try JSONDecoder().decode(EngineStatus.self, from: Data(out.utf8))
        }
        struct CLIFailure: Error { let message: String }

        @Test func theFrontEndAndStatusAgreeOnWhatWaitsInEveryState() async throws {
            guard TmuxSession.available else { Issue.record("tmux is not installed"); return }
            let d = try await Daemons.start(["A"])
            let docs = d.folder("A").appendingPathComponent("Documents")
            try Data("first".utf8).write(to: docs.appendingPathComponent("kept.txt"))
            #expect(await eventually { (try? Self.status(d)).map { $0.idle && $0.waiting == 0 } == true }, "synced at first")

            let t = try TmuxSession(width: 100, height: 30)
            defer { t.kill() }
            try t.startFrontEnd(home: d.home("A").path)
            #expect(t.waitFor("Documents/"), "\(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor { $0.contains("kept.txt") && $0.contains("up to date") }, "\(t.capture())")

            // Paused: an edit and two new files are read and listed as waiting, and both say 3.
            try t.send("P")
            #expect(await eventually { (try? Self.status(d))?.paused == true }, "paused")
            try Data("edited while paused".utf8).write(to: docs.appendingPathComponent("kept.txt"))
            try Data("new".utf8).write(to: docs.appendingPathComponent("new-1.txt"))
            try Data("new".utf8).write(to: docs.appendingPathComponent("new-2.txt"))
            #expect(t.waitFor { $0.contains("new-2.txt") && $0.contains("paused · 3 waiting") }, "\(t.capture())")
            let paused = try Self.status(d)
            #expect(paused.waiting == 3 && paused.paused == true, "\(paused)")
            #expect(t.capture().split(separator: "\n").contains { $0.contains("kept.txt") && $0.contains("19 B") }, "the edit's size shows: \(t.capture())")

            // Offline (the server stopped, syncing resumed): both still say 3, and when it tries again.
            d.stopServer()
            try t.send("P")
            #expect(t.waitFor { $0.contains("offline · 3 waiting · retry in") }, "\(t.capture())")
            let offline = try Self.status(d)
            #expect(offline.state == .offline && offline.waiting == 3 && offline.retryIn != nil, "\(offline)")
            let (_, text, _) = try ChildProcess.runUbiq(["status", "--home", d.home("A").path])
            // When it tries again (or, asked while an attempt runs, that it is trying).
            #expect(text.contains("waiting: 3 changes made here") && (text.contains("trying again in") || text.contains("(trying now)")), "\(text)")

            // Online again: everything goes up; both say nothing waits.
            try d.startServer()
            #expect(t.waitFor(timeout: 60) { $0.contains("up to date") }, "\(t.capture())")
            #expect(await eventually { (try? Self.status(d)).map { $0.idle && $0.waiting == 0 } == true })
            try t.send("q")
            #expect(t.waitFor("EXIT=0"), "\(t.capture())")
            await d.stop()
        }
    }
}
