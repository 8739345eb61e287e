import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqTesting

/// #39 §2 "a dishonest server is caught", on a device of an encrypted account whose server
/// lies (`DishonestServer`, between the device's sealing layer and the real server): what it
/// sends is checked on the device, reported as `tampered`, never written into the folder, and
/// the server's own copy is left alone (honest again, the device gets everything).
@Suite("End-to-end encryption: a dishonest server is caught", .serialized)
struct EncryptedTamperTests {
    @Test(arguments: [DishonestServer.Lie.swapChunks, .cutChunks])
    func aChunkThatIsNotTheOneNamedIsNeverWritten(_ lie: DishonestServer.Lie) async throws {
        try await withFleet(backend: .encrypted) { fleet in
            let a = try await fleet.device("A")
            let b = try await fleet.device("B", wrap: { DishonestServer($0) })
            let liar = try #require(b.server as? DishonestServer)
            liar.set(lie)
            var rng = SeededRandom.forTest("e2e.tamper.chunks")
            let one = rng.bytes(300_000), two = rng.bytes(200_000)
            try a.write("Documents/one.bin", bytes: one)
            try a.write("Documents/two.bin", bytes: two)
            let caught = await eventually(timeout: .seconds(30)) { await b.engine.status().errors.contains { $0.code == ErrorCode.tampered.rawValue } }
            let seen = await b.engine.status()
            #expect(caught, "\(seen.errors)")
            #expect(liar.told > 0)
            #expect(!b.exists("Documents/one.bin") && !b.exists("Documents/two.bin"),
                    "B holds \(b.readBytes("Documents/one.bin").map { $0 == one ? "one.bin whole" : "one.bin, \($0.count) other bytes" } ?? "no one.bin"), \(b.readBytes("Documents/two.bin").map { $0 == two ? "two.bin whole" : "two.bin, \($0.count) other bytes" } ?? "no two.bin"); told \(liar.told); \(seen.errors)")
            liar.set(.none)
            _ = await b.engine.retry([try RelativePath(validating: "Documents/one.bin"), try RelativePath(validating: "Documents/two.bin")])
            let healed = await eventually(timeout: .seconds(60)) { b.readBytes("Documents/one.bin") == one && b.readBytes("Documents/two.bin") == two }
            let after = await b.engine.status()
            #expect(healed, "\(after.errors)")
        }
    }

    /// A version the server points at another file's content, sends without its sealed record,
    /// or shows under another item (one file's whole version as the other's): the feed stops
    /// there, with the reason; nothing is written.
    @Test(arguments: [DishonestServer.Lie.otherContent, .dropRecords, .moveRecords])
    func aVersionThatIsNotWhatItsDeviceCommittedIsCaught(_ lie: DishonestServer.Lie) async throws {
        try await withFleet(backend: .encrypted) { fleet in
            let a = try await fleet.device("A")
            try a.write("Documents/one.txt", "the first file")
            try a.write("Documents/two.txt", "the second file, longer")
            // Both on the server before B starts, so B's first page of the feed holds both.
            let obs = fleet.view(a)
            #expect(await eventually {
                ((try? await obs.changes(a.config.container, after: 0, limit: 1000).items) ?? []).filter { $0.current?.uploaded == true }.count == 2
            })
            let b = try await fleet.device("B", wrap: { let d = DishonestServer($0); d.set(lie); return d })
            let liar = try #require(b.server as? DishonestServer)
            let caught = await eventually(timeout: .seconds(30)) {
                let e = await b.engine.status().lastError ?? ""
                return e.contains("another content") || e.contains("without its sealed record") || e.contains("did not open as item")
            }
            let seen = await b.engine.status()
            #expect(caught, "\(seen)")
            #expect(liar.told > 0)
            #expect(!b.exists("Documents/one.txt") && !b.exists("Documents/two.txt"))
            liar.set(.none)
            await b.engine.requestPass()
            #expect(await eventually(timeout: .seconds(30)) { b.read("Documents/one.txt") == "the first file" && b.read("Documents/two.txt") == "the second file, longer" })
        }
    }

    /// A server showing a document's first version as current again after B held a later one —
    /// every byte of it genuine, sealed by A — is caught by the generation sealed in each record:
    /// B's copy keeps the newer content, the status says why, and an honest server heals it. A
    /// user keeping an older version on purpose is not taken for one: the content is committed
    /// again as the newest version, and B takes it.
    @Test func aRollbackToAnOlderVersionIsCaughtAndAKeptOldVersionIsNot() async throws {
        try await withFleet(backend: .encrypted) { fleet in
            let a = try await fleet.device("A")
            let b = try await fleet.device("B", wrap: { DishonestServer($0) })
            let liar = try #require(b.server as? DishonestServer)
            let doc = try RelativePath(validating: "Documents/ledger.txt")
            try a.write(doc.string, "first: 100")
            #expect(await eventually(timeout: .seconds(30)) { b.read(doc.string) == "first: 100" })
            try a.write(doc.string, "second: 250")
            #expect(await eventually(timeout: .seconds(30)) { b.read(doc.string) == "second: 250" })
            let generations = try await a.engine.versions(of: doc)
            #expect(generations.current?.generation == 2 && generations.others.map(\.generation) == [1], "\(generations)")
            // A's next edit reaches B's feed as the first version again.
            liar.set(.rollBack)
            try a.write(doc.string, "third: 400")
            let caught = await eventually(timeout: .seconds(30)) { await b.engine.status().lastError?.contains("older version passed off") == true }
            let seen = await b.engine.status()
            #expect(caught, "\(seen)")
            #expect(liar.told > 0)
            #expect(b.read(doc.string) == "second: 250", "B kept the newer content")
            liar.set(.none)
            await b.engine.requestPass()
            #expect(await eventually(timeout: .seconds(30)) { b.read(doc.string) == "third: 400" })
            // The user keeps the first version: committed again as generation 4, B takes it.
            let history = try await a.engine.versions(of: doc)
            let first = try #require(history.others.first { $0.generation == 1 })
            let kept = try await a.engine.resolve(doc, keep: first.id)
            #expect(kept.current?.hash == first.hash && kept.current?.id != first.id)
            #expect(await eventually(timeout: .seconds(30)) { b.read(doc.string) == "first: 100" && a.read(doc.string) == "first: 100" })
            let after = try await b.engine.versions(of: doc)
            #expect(after.current?.generation == 4 && after.current?.hash == first.hash, "\(after)")
        }
    }

    @Test func aNameThatIsNotASealedNameStopsTheFeedAndNothingIsWritten() async throws {
        try await withFleet(backend: .encrypted) { fleet in
            let a = try await fleet.device("A")
            let b = try await fleet.device("B", wrap: { DishonestServer($0) })
            let liar = try #require(b.server as? DishonestServer)
            liar.set(.renameTo("planted.txt"))
            try a.write("Documents/real.txt", "what A wrote")
            let caught = await eventually(timeout: .seconds(30)) { await b.engine.status().lastError?.contains("not a sealed name") == true }
            let seen = await b.engine.status()
            #expect(caught, "\(seen)")
            #expect(liar.told > 0)
            #expect(!b.exists("Documents/planted.txt") && !b.exists("Documents/real.txt"))
            liar.set(.none)
            await b.engine.requestPass()
            #expect(await eventually(timeout: .seconds(30)) { b.read("Documents/real.txt") == "what A wrote" })
            #expect(!b.exists("Documents/planted.txt"))
        }
    }
}

/// #39 §2 "everything else keeps working": the server's garbage collection on an encrypted
/// account, whose chunks it knows only by the hash of their sealed bytes. A document deleted and
/// purged gives its chunks back; the chunks another document shares with it, and every chunk
/// of the documents kept, stay — a new device of the account opens all of them.
@Suite("End-to-end encryption: garbage collection", .serialized)
struct EncryptedGarbageTests {
    @Test func collectionGivesBackAPurgedDocumentsChunksAndKeepsEverySharedOne() async throws {
        try await withFleet(backend: .encrypted) { fleet in
            let a = try await fleet.device("A")
            var rng = SeededRandom.forTest("e2e.gc")
            let shared = rng.bytes(400_000), own = rng.bytes(300_000), keptOwn = rng.bytes(250_000)
            let gone = shared + own, kept = shared + keptOwn  // content-defined cuts: most of `shared` is the same chunks in both
            try a.write("Documents/gone.bin", bytes: gone)
            try a.write("Documents/kept.bin", bytes: kept)
            let view = fleet.view(a)
            let container = a.config.container
            var manifests: [String: Manifest] = [:]
            #expect(await eventually(timeout: .seconds(30)) {
                guard let items = try? await view.changes(container, after: 0, limit: 100).items else { return false }
                for i in items where i.current?.uploaded == true {
                    if let m = try? await view.manifest(container, version: i.current!.id) { manifests[i.path.name] = m }
                }
                return manifests.count == 2
            }, "both documents up: \(manifests.keys)")
            let goneChunks = Set(try #require(manifests["gone.bin"]).chunks.map(\.hash)), keptChunks = Set(try #require(manifests["kept.bin"]).chunks.map(\.hash))
            let onlyGone = goneChunks.subtracting(keptChunks)
            #expect(!onlyGone.isEmpty && !goneChunks.isDisjoint(with: keptChunks), "the two share some chunks and not others")

            try FileManager.default.removeItem(at: a.url("Documents/gone.bin"))
            #expect(await eventually(timeout: .seconds(30)) { (try? await view.trash(container).items.count) == 1 })
            _ = try await view.emptyTrash(container)
            let report = try await fleet.server.services.collectGarbage()
            #expect(report.garbageChunks >= onlyGone.count && report.garbageBytes > 0, "\(report)")

            // What only the purged document held is gone from the server; the rest opens.
            let plain = UbiqAPIClient(baseURL: fleet.server.baseURL, token: a.config.token, trusting: fleet.server.trusted)
            for h in onlyGone { #expect((try? await plain.downloadChunk(h)) == nil, "chunk \(h.hex.prefix(12)) of the purged document is still served") }
            for h in keptChunks { #expect((try? await view.downloadChunk(h)) != nil, "chunk \(h.hex.prefix(12)) of the kept document is gone") }
            let c = try await fleet.device("C")
            #expect(await eventually(timeout: .seconds(30)) { c.readBytes("Documents/kept.bin") == kept }, "a new device of the account gets the kept document whole")
            #expect(!c.exists("Documents/gone.bin"))
        }
    }
}
