import Foundation
import Testing
import Ubiquity
import UbiqCore
import UbiqTesting
#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuites {
    /// The example app (`ubiq-notes`, written only against `import Ubiquity`) on two devices.
    @Suite("The example notes app", .serialized)
    struct NotesAppTests {
        static var binary: String { URL(fileURLWithPath: ChildProcess.ubiqBinary()).deletingLastPathComponent().appendingPathComponent("ubiq-notes").path }

        static func notes(_ d: Daemons, _ device: String, _ args: [String]) throws -> (Int32, String, String) {
            let p = try ChildProcess(binary, args + ["--home", d.home(device).path])
            let status = p.wait(timeout: 120)
            return (status, p.stdout, p.stderr)
        }

        @Test func notesListLiveSyncSettingsAndAConflictKeptBoth() async throws {
            let d = try await Daemons.start(["A", "B"])
            var (s, out, err) = try Self.notes(d, "A", ["write", "shopping", "milk, eggs"])
            #expect(s == 0 && out.contains("saved shopping"), "\(err)")

            // B watches; A's next note appears there as it happens.
            let watch = try ChildProcess(Self.binary, ["watch", "--home", d.home("B").path])
            #expect(watch.waitForOutput(timeout: 30, { $0.contains("watching") }) != nil, "\(watch.stderr)")
            (s, _, err) = try Self.notes(d, "A", ["write", "todo", "call Bob"])
            #expect(s == 0, "\(err)")
            #expect(watch.waitForOutput(timeout: 30, { $0.contains("+ todo") || $0.contains("~ todo") }) != nil, "\(watch.stdout)")
            watch.signal(SIGTERM)
            watch.wait()

            #expect(await eventually(timeout: .seconds(30)) {
                let (_, listed, _) = (try? Self.notes(d, "B", ["list"])) ?? (1, "", "")
                return listed.contains("shopping\t") && listed.contains("todo\t")
            })
            (s, out, _) = try Self.notes(d, "B", ["show", "shopping"])
            #expect(s == 0 && out.contains("milk, eggs"), "\(out)")

            // The sort order is a synced setting.
            (s, _, _) = try Self.notes(d, "A", ["sort", "size"])
            #expect(s == 0)
            #expect(await eventually(timeout: .seconds(30)) { ((try? Self.notes(d, "B", ["sort"]))?.1 ?? "").contains("size") })

            // A conflict on purpose: B edits while its daemon is stopped, A edits meanwhile.
            d.stopDaemon("B")
            (s, _, err) = try Self.notes(d, "A", ["write", "shopping", "A's list: bread"])
            #expect(s == 0, "\(err)")
            let shoppingA = d.home("A").appendingPathComponent("Ubiquity/TEAM.com.example.notes/Documents/Notes/shopping.txt")
            let sent = await eventually(timeout: .seconds(30)) {
                (try? await FileVersion.current(of: shoppingA, ubiquity: d.ubiquity("A")))?.size == "A's list: bread".utf8.count
            }
            #expect(sent, "A's edit is the server's current version")
            try Data("B's list: apples".utf8).write(to: d.home("B").appendingPathComponent("Ubiquity/TEAM.com.example.notes/Documents/Notes/shopping.txt"))
            try d.startDaemon("B")
            #expect(await eventually(timeout: .seconds(60)) { ((try? Self.notes(d, "A", ["conflicts", "shopping"]))?.1 ?? "").contains("conflict\t") },
                    "\(((try? Self.notes(d, "A", ["conflicts", "shopping"]))?.1) ?? "")")
            (s, out, err) = try Self.notes(d, "A", ["keep-both", "shopping"])
            #expect(s == 0 && out.contains("kept as"), "\(out) \(err)")
            #expect(((try? Self.notes(d, "A", ["conflicts", "shopping"]))?.1 ?? "").contains("no conflicts"))
            #expect(await eventually(timeout: .seconds(30)) {
                let (_, listed, _) = (try? Self.notes(d, "B", ["list"])) ?? (1, "", "")
                return listed.split(separator: "\n").filter { $0.hasPrefix("shopping") }.count == 2 && !listed.contains("CONFLICT")
            }, "both versions are notes on B, no conflict left")
            await d.stop()
        }
    }
}
