import Foundation
import Testing
import Ubiquity
import UbiqCore
import UbiqTesting
#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuites {
    /// The front end switches container (`:container ID`, and the picker `:container` opens),
    /// driven in tmux against a daemon.
    @Suite("Front end: several containers", .serialized)
    struct FrontEndContainerTests {
        @Test func containerCommandSwitchesWhatIsShown() async throws {
            guard TmuxSession.available else { Issue.record("tmux is not installed"); return }
            let d = try await Daemons.start(["A"])
            let a = d.ubiquity("A")
            let team = try #require(await a.containerURL("TEAM.com.example.notes"))
            try Data("default".utf8).write(to: d.folder("A").appendingPathComponent("Documents/default-only.txt"))
            try Data("team".utf8).write(to: team.appendingPathComponent("Documents/team-only.txt"))
            #expect(await eventually { (try? await a.status(of: team.appendingPathComponent("Documents/team-only.txt"))) != nil })

            let t = try TmuxSession(width: 100, height: 30)
            defer { t.kill() }
            try t.startFrontEnd(home: d.home("A").path)
            #expect(t.waitFor("Documents/"), "\(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor("default-only.txt"), "\(t.capture())")

            try t.type(":container TEAM.com.example.notes")
            try t.send("Enter")
            // The flash, not the prompt still being typed: the switch was made (the next
            // `Documents/` is the new container's).
            #expect(t.waitFor { $0.contains("container TEAM.com.example.notes") && !$0.contains("command (") }, "\(t.capture())")
            #expect(t.waitFor("Documents/"), "\(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor { $0.contains("team-only.txt") && !$0.contains("default-only.txt") }, "\(t.capture())")

            // The picker: both containers, the one shown marked; k + Enter goes back to the default.
            try t.type(":container")
            try t.send("Enter")
            #expect(t.waitFor { $0.contains("Containers (2)") && $0.contains("TEAM.com.example.notes") && $0.contains("iCloud.default  (default)") }, "\(t.capture())")
            try t.send("k")
            try t.send("Enter")
            #expect(t.waitFor("container iCloud.default"), "\(t.capture())")
            #expect(t.waitFor("Documents/"), "\(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor { $0.contains("default-only.txt") && !$0.contains("team-only.txt") }, "\(t.capture())")

            // n in the picker names a new container: it is synced from now on and shown.
            try t.type(":container")
            try t.send("Enter")
            #expect(t.waitFor("Containers (2)"), "\(t.capture())")
            try t.send("n")
            try t.type("iCloud.com.example.fresh")
            try t.send("Enter")
            #expect(t.waitFor("container iCloud.com.example.fresh"), "\(t.capture())")
            #expect(await eventually { (try? await a.containers())?.contains("iCloud.com.example.fresh") == true })
            #expect(FileManager.default.fileExists(atPath: d.home("A").appendingPathComponent("Ubiquity/iCloud.com.example.fresh/Documents").path))
            try t.type(":container")
            try t.send("Enter")
            #expect(t.waitFor("Containers (3)"), "\(t.capture())")
            try t.send("Escape")
            #expect(t.waitFor { !$0.contains("Containers (3)") }, "\(t.capture())")
            try t.type(":container ../etc")
            try t.send("Enter")
            #expect(t.waitFor("not a container ID"), "\(t.capture())")
            try t.send("Escape")
            try t.send("q")
            #expect(t.waitFor("EXIT=0"), "\(t.capture())")
            await d.stop()
        }

        /// The folder each container was left in is its own: a switch remembers the old
        /// container's folder under its key (it went under the first container's key, so the
        /// next start lost the default container's folder).
        @Test func eachContainerKeepsItsOwnLastFolder() async throws {
            guard TmuxSession.available else { Issue.record("tmux is not installed"); return }
            let d = try await Daemons.start(["A"])
            let a = d.ubiquity("A")
            let team = try #require(await a.containerURL("TEAM.com.example.notes"))
            try Data("default".utf8).write(to: d.folder("A").appendingPathComponent("Documents/default-only.txt"))
            try FileManager.default.createDirectory(at: team.appendingPathComponent("Documents/Plans"), withIntermediateDirectories: true)
            try Data("team".utf8).write(to: team.appendingPathComponent("Documents/Plans/team-plan.txt"))
            #expect(await eventually { (try? await a.status(of: team.appendingPathComponent("Documents/Plans/team-plan.txt"))) != nil })

            let t = try TmuxSession(width: 100, height: 30)
            defer { t.kill() }
            try t.startFrontEnd(home: d.home("A").path)
            #expect(t.waitFor("Documents/"), "\(t.capture())")
            try t.send("Enter")
            // The header names the account once the first status came: the screen knows its place.
            #expect(t.waitFor { $0.contains("default-only.txt") && $0.contains("alice@") }, "\(t.capture())")
            try t.type(":container TEAM.com.example.notes")
            try t.send("Enter")
            // The flash, not the prompt still being typed: the switch was made (the next
            // `Documents/` is the new container's).
            #expect(t.waitFor { $0.contains("container TEAM.com.example.notes") && !$0.contains("command (") }, "\(t.capture())")
            #expect(t.waitFor("Documents/"), "\(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor("Plans/"), "\(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor("team-plan.txt"), "\(t.capture())")
            #expect(t.quitFrontEnd("EXIT=0"), "\(t.capture())")

            // Started again (on the default container): back in its Documents, not at the top.
            try t.startFrontEnd(home: d.home("A").path, prefix: "clear; ", marker: "EXIT2")
            #expect(t.waitFor("default-only.txt"), "the default container's folder is restored: \(t.capture())")
            #expect(t.quitFrontEnd("EXIT2=0"), "\(t.capture())")
            await d.stop()
        }
    }
}
