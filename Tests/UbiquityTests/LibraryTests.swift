import Foundation
import Testing
import Ubiquity
import UbiqCore
import UbiqTesting

extension DaemonSuites {
    /// Two devices with daemons and a program on each using `import Ubiquity`.
    @Suite("The Ubiquity library across two devices", .serialized)
    struct LibraryTests {
        @Test func aProgramOnEachDeviceSeesTheOthersDocumentsAndSettings() async throws {
            let d = try await Daemons.start(["A", "B"])
            let a = d.ubiquity("A"), b = d.ubiquity("B")

            // Containers and identity.
            let folderA = try #require(await a.containerURL())
            #expect(folderA.standardizedFileURL.path == d.folder("A").standardizedFileURL.path)
            #expect(await a.containerURL("iCloud.default") != nil)
            #expect(await a.containerURL("not a container/..") == nil, "not a container ID")
            let tokenA = await a.identityToken, tokenB = await b.identityToken
            #expect(tokenA != nil && tokenA == tokenB, "one account: one token on both devices")
            #expect(tokenA?.count == 64)

            // B watches for text documents; A moves one into the cloud.
            let seen = Collected<MetadataQuery.Notification>()
            let query = MetadataQuery(predicate: "name LIKE '*.txt'", scope: .documents, ubiquity: b)
            let watching = Task {
                for try await n in query.notifications() { seen.add(n) }
            }
            #expect(await eventually { seen.all.contains { if case .didFinishGathering = $0 { true } else { false } } })
            let outside = d.dir.url.appendingPathComponent("draft.txt")
            try Data("the first note".utf8).write(to: outside)
            let note = folderA.appendingPathComponent("Documents/note.txt")
            let t0 = ContinuousClock.now
            try await a.setUbiquitous(true, item: outside, destination: note)
            #expect(!FileManager.default.fileExists(atPath: outside.path))
            let arrived = await eventually(timeout: .seconds(30)) {
                seen.all.contains { if case .didUpdate(let added, _, _) = $0 { added.contains { $0.name == "note.txt" } } else { false } }
            }
            #expect(arrived, "B's query saw A's document: \(seen.all)")
            print("[library] A's new document in B's query after \(ContinuousClock.now - t0)")
            #expect(query.results.map(\.name) == ["note.txt"])
            let noteB = d.folder("B").appendingPathComponent("Documents/note.txt")
            #expect(await eventually { (try? await b.status(of: noteB))?.status == .current })

            // Settings: an atomic write on A arrives on B with its reason and keys.
            let changes = Collected<KeyValueStore.Change>()
            let storeB = KeyValueStore(ubiquity: b)
            let ready = Collected<Bool>()
            let listening = Task {
                for try await c in storeB.changes(ready: { ready.add(true) }) { changes.add(c) }
            }
            let storeA = KeyValueStore("iCloud.default", ubiquity: a)
            #expect(await eventually { !ready.all.isEmpty })
            #expect(try await storeA.set(["theme": .string("dark"), "fontSize": .int(12)]))
            #expect(await eventually(timeout: .seconds(30)) {
                changes.all.contains { $0.reason == .serverChange && Set($0.keys).isSuperset(of: ["theme", "fontSize"]) }
            }, "\(changes.all)")
            #expect(try await storeB.string(forKey: "theme") == "dark")
            #expect(try await storeB.int(forKey: "fontSize") == 12)
            #expect(try await storeB.value(forKey: "nothing") == nil)
            #expect(try await storeB.synchronize())
            await #expect(throws: UbiquityError.self) { _ = try await KeyValueStore("../elsewhere", ubiquity: b).value(forKey: "theme") }

            // Versions: the current one reads back; evict and download again on B.
            let versions = try await FileVersion.versions(of: noteB, ubiquity: b)
            #expect(versions.unresolvedConflicts.isEmpty)
            let current = try #require(versions.current)
            #expect(try await current.content(ubiquity: b) == Data("the first note".utf8))
            try await b.evict(noteB)
            #expect(try await b.status(of: noteB)?.status == .notDownloaded)
            try await b.startDownloading(noteB)
            #expect(await eventually { (try? await b.status(of: noteB))?.status == .current })

            // A takes the document out of the cloud: B's query reports it removed.
            let back = d.dir.url.appendingPathComponent("kept.txt")
            try await a.setUbiquitous(false, item: note, destination: back)
            #expect(try String(contentsOf: back, encoding: .utf8) == "the first note")
            #expect(await eventually(timeout: .seconds(30)) {
                seen.all.contains { if case .didUpdate(_, _, let removed) = $0 { removed.contains { $0.name == "note.txt" } } else { false } }
            })
            // Hostile calls are clear errors.
            let e = await #expect(throws: UbiquityError.self) { try await a.evict(URL(fileURLWithPath: "/etc/passwd")) }
            #expect(e?.code == .notInContainer)

            watching.cancel()
            listening.cancel()
            await d.stop()
        }

        @Test func theIdentityGoesAwayWithTheDaemonAndComesBack() async throws {
            let d = try await Daemons.start(["A"])
            let a = d.ubiquity("A")
            let tokens = Collected<String?>()
            let task = Task { for await t in a.identityChanges(retry: .milliseconds(200)) { tokens.add(t) } }
            #expect(await eventually { tokens.all.first??.count == 64 })
            d.stopDaemon("A")
            #expect(await eventually { tokens.all.count >= 2 && tokens.all.last! == nil }, "\(tokens.all)")
            #expect(await a.containerURL() == nil)
            let e = await #expect(throws: UbiquityError.self) { _ = try await KeyValueStore(ubiquity: a).value(forKey: "x") }
            #expect(e?.code == .noDaemon && e?.message.contains("ubiq daemon") == true, "\(String(describing: e))")
            try d.startDaemon("A")
            #expect(await eventually { tokens.all.count >= 3 && tokens.all.last! == tokens.all.first! }, "\(tokens.all)")
            task.cancel()
            await d.stop()
        }
    }
}
