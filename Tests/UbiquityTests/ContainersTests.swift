import Foundation
import Testing
import Ubiquity
import UbiqCore
import UbiqTesting
#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuites {
    /// Several containers on one device: each synced in its own folder, with its own settings,
    /// isolated from the others; added by a program or a command naming one; kept across restarts;
    /// a home from before there were several keeps working.
    @Suite("Several containers per device", .serialized)
    struct ContainersTests {
        static let notes = "TEAM.com.example.notes"

        @Test func twoContainersSyncSideBySideEachIsolated() async throws {
            let d = try await Daemons.start(["A", "B"])
            let a = d.ubiquity("A"), b = d.ubiquity("B")
            // A program on A names a second container: the device syncs it from now on.
            let notesA = try #require(await a.containerURL(Self.notes))
            #expect(notesA.standardizedFileURL.path == d.home("A").appendingPathComponent("Ubiquity/\(Self.notes)").standardizedFileURL.path)
            #expect(FileManager.default.fileExists(atPath: notesA.appendingPathComponent("Documents").path))
            #expect(try await a.containers() == ["iCloud.default", Self.notes])
            let defaultA = try #require(await a.containerURL())

            try Data("a note".utf8).write(to: notesA.appendingPathComponent("Documents/note.txt"))
            try Data("a default document".utf8).write(to: defaultA.appendingPathComponent("Documents/default.txt"))
            try await KeyValueStore(Self.notes, ubiquity: a).set(.string("notes only"), forKey: "scope")

            // B asks for the notes container through a query: it appears there, and only there.
            let seen = Collected<MetadataQuery.Notification>()
            let watching = Task { for try await n in MetadataQuery(container: Self.notes, ubiquity: b).notifications() { seen.add(n) } }
            let notesB = d.home("B").appendingPathComponent("Ubiquity/\(Self.notes)")
            #expect(await eventually(timeout: .seconds(30)) { (try? String(contentsOf: notesB.appendingPathComponent("Documents/note.txt"), encoding: .utf8)) == "a note" })
            let defaultB = d.folder("B")
            #expect(await eventually(timeout: .seconds(30)) { FileManager.default.fileExists(atPath: defaultB.appendingPathComponent("Documents/default.txt").path) })
            #expect(!FileManager.default.fileExists(atPath: defaultB.appendingPathComponent("Documents/note.txt").path), "the note stays in its container")
            #expect(!FileManager.default.fileExists(atPath: notesB.appendingPathComponent("Documents/default.txt").path))
            #expect(await eventually { seen.all.contains { n in
                switch n {
                case .didFinishGathering(let items), .didUpdate(let items, _, _): return items.contains { $0.name == "note.txt" }
                }
            } })
            #expect(await eventually(timeout: .seconds(30)) { (try? await KeyValueStore(Self.notes, ubiquity: b).string(forKey: "scope")) == "notes only" })
            #expect(try await KeyValueStore(ubiquity: b).value(forKey: "scope") == nil, "settings stay in their store")

            // The command line: `containers`, and `--container` on an item command.
            let (s1, out1, e1) = try ChildProcess.runUbiq(["containers", "--json", "--home", d.home("B").path])
            #expect(s1 == 0, "\(e1)")
            #expect(out1.contains("\"id\" : \"iCloud.default\"") && out1.contains("\"id\" : \"\(Self.notes)\""), "\(out1)")
            let (s2, out2, e2) = try ChildProcess.runUbiq(["ls", "--container", Self.notes, "--json", "--home", d.home("B").path])
            #expect(s2 == 0, "\(e2)")
            #expect(out2.contains("note.txt") && !out2.contains("default.txt"), "\(out2)")
            let (s3, _, e3) = try ChildProcess.runUbiq(["ls", "--container", "../etc", "--home", d.home("B").path])
            #expect(s3 != 0 && !e3.isEmpty)

            // Hostile addressing on the socket: a bad container is a clear refusal.
            if let fd = DaemonProtocolTests.connectRaw(d.socketPath("B")) {
                #expect(DaemonProtocolTests.exchange(fd, Array(#"{"container":"../../etc","status":{}}"#.utf8) + [0x0A]).contains("bad request"))
                close(fd)
            }
            if let fd = DaemonProtocolTests.connectRaw(d.socketPath("B")) {
                #expect(DaemonProtocolTests.exchange(fd, Array(#"{"container":7,"status":{}}"#.utf8) + [0x0A]).contains("bad request"))
                close(fd)
            }

            // Kept across a restart of B's daemon.
            watching.cancel()
            d.stopDaemon("B")
            try d.startDaemon("B")
            #expect(try await b.containers() == ["iCloud.default", Self.notes])
            try Data("another note".utf8).write(to: notesA.appendingPathComponent("Documents/second.txt"))
            #expect(await eventually(timeout: .seconds(30)) { FileManager.default.fileExists(atPath: notesB.appendingPathComponent("Documents/second.txt").path) })
            await d.stop()
        }

        @Test func aHomeFromBeforeSeveralContainersKeepsWorking() async throws {
            let d = try await Daemons.start(["A"])
            try Data("before".utf8).write(to: d.folder("A").appendingPathComponent("Documents/old.txt"))
            let old = d.folder("A").appendingPathComponent("Documents/old.txt")
            #expect(await eventually { (try? await d.ubiquity("A").status(of: old))?.status == .current })
            let inode = try FileManager.default.attributesOfItem(atPath: old.path)[.systemFileNumber] as? Int
            d.stopDaemon("A")
            // The config as an older ubiq wrote it: one container, no list.
            let file = d.home("A").appendingPathComponent("config/config.json")
            var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
            object.removeValue(forKey: "containers")
            try JSONSerialization.data(withJSONObject: object).write(to: file)
            try d.startDaemon("A")
            #expect(try await d.ubiquity("A").containers() == ["iCloud.default"])
            #expect(try await d.ubiquity("A").status(of: old) != nil, "its state was kept: the file is known at once")
            #expect(await eventually { (try? await d.ubiquity("A").status(of: old))?.status == .current })
            #expect(try FileManager.default.attributesOfItem(atPath: old.path)[.systemFileNumber] as? Int == inode, "nothing downloaded again")
            _ = await d.ubiquity("A").containerURL(Self.notes)
            let saved = try String(contentsOf: file, encoding: .utf8)
            #expect(saved.contains("\"containers\"") && saved.contains(Self.notes), "the config now lists both")
            await d.stop()
        }
    }
}
