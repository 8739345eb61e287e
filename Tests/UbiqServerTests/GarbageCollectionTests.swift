import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqServer
import UbiqStorage
import UbiqTesting

/// Commits `bytes` with its missing chunks uploaded as one batch (so the server stores them as
/// one pack), and completes the version.
@discardableResult
func commitPacked(_ c: UbiqAPIClient, _ p: String, _ bytes: [UInt8], container: ContainerID = notes) async throws -> CommitResponse {
    let m = Manifest.of(bytes)
    let missing = Set(try await c.missingChunks(m.chunks.map(\.hash)))
    var named: [(ContentHash, [UInt8])] = []
    var offset = 0
    for ch in m.chunks {
        if missing.contains(ch.hash) { named.append((ch.hash, Array(bytes[offset..<offset + ch.size]))) }
        offset += ch.size
    }
    try await c.uploadChunks(named: named)
    let r = try await c.commit(container, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path(p), kind: .file,
                                                        base: nil, modified: Date(), manifest: m))
    if let v = r.version, !v.uploaded { _ = try await c.complete(container, version: v.id) }
    return r
}

/// A version's content, chunk by chunk, checked against its manifest.
/// Collections back to back on `services` while alice makes and empties garbage and bob
/// uploads the same contents (found stored, so not written again) and commits them; then one
/// more collection. Returns how many collections ran and bob's versions with their contents.
func raceCollections(_ services: ServerServices, alice: UbiqAPIClient, bob: UbiqAPIClient, contents: [[UInt8]]) async throws
    -> (runs: Int, bobs: [(VersionID, [UInt8])]) {
    let collector = Task {
        var runs = 0
        while !Task.isCancelled {
            do { _ = try await services.collectGarbage(); runs += 1 } catch { if Task.isCancelled { break }; throw error }
        }
        return runs
    }
    var bobs: [(VersionID, [UInt8])] = []
    for (i, content) in contents.enumerated() {
        let a = try await commitPacked(alice, "Documents/a\(i).bin", content)
        _ = try await alice.delete(notes, item: a.item.id)
        _ = try await alice.emptyTrash(notes)
        bobs.append((try #require(try await commitPacked(bob, "Documents/b\(i).bin", content).version?.id), content))
    }
    collector.cancel()
    let runs = try await collector.value
    _ = try await services.collectGarbage()
    return (runs, bobs)
}

func downloadBytes(_ c: UbiqAPIClient, version: VersionID, container: ContainerID = notes) async throws -> [UInt8] {
    let m = try await c.manifest(container, version: version)
    var out: [UInt8] = []
    for ch in m.chunks { out += try await c.downloadChunk(ch.hash) }
    return out
}

/// Garbage collection gives back the disk that pruned history, emptied trash and uploads never
/// committed held, and never takes a chunk anyone still holds — not even one an upload is
/// storing while it runs.
@Suite("Garbage collection")
struct GarbageCollectionTests {
    @Test(arguments: StoreKind.available, DatabaseKind.available)
    func anEmptiedTrashIsGivenBackToTheDiskAndWhatOthersHoldStays(_ kind: StoreKind, _ db: DatabaseKind) async throws {
        guard let database = try await db.fresh() else { return }
        let server = try await TestServer.start(database: database, blobs: kind.blobs)
        try await server.user("alice")
        try await server.user("bob")
        let (alice, _) = try await server.device("alice")
        let (bob, _) = try await server.device("bob", name: "desktop")
        var rng = SeededRandom.forTest("gc.trash")
        let files = (0..<6).map { _ in rng.bytes(600_000) }
        var ids: [ItemID] = []
        for (i, f) in files.enumerated() { ids.append(try await commitPacked(alice, "Documents/f\(i).bin", f).item.id) }
        // Bob holds the same content as alice's f5 (his own upload of it).
        let bobs = try await commitPacked(bob, "Documents/same.bin", files[5])
        let before = try await server.services.chunks.footprint()

        // Alice deletes f1…f5 and empties her trash: her usage falls at once, the disk at the collection.
        for id in ids[1...] { _ = try await alice.delete(notes, item: id) }
        let emptied = try await alice.emptyTrash(notes)
        #expect(emptied.items == 5)
        #expect(try await alice.account().used == 600_000)

        let dry = try await server.services.collectGarbage(dryRun: true)
        #expect(dry.garbageBytes == 4 * 600_000, "f1…f4 are garbage; f5 is bob's too")
        #expect(try await server.services.chunks.footprint() == before, "a dry run changes nothing")

        let report = try await server.services.collectGarbage()
        #expect(report.garbageBytes == 4 * 600_000 && report.packsDeleted == 4, "\(report)")
        let after = try await server.services.chunks.footprint()
        #expect(before - after >= 4 * 600_000, "the store shrank by what went: \(before) → \(after)")
        #expect(report.storeBytesBefore == before && report.storeBytesAfter == after)

        // What is still held reads back whole, for both accounts.
        #expect(try await downloadBytes(alice, version: try #require(try await alice.changes(notes, after: 0).items.first { $0.id == ids[0] }?.current?.id)) == files[0])
        #expect(try await downloadBytes(bob, version: try #require(bobs.version?.id)) == files[5])
        // A second collection finds nothing more.
        let again = try await server.services.collectGarbage()
        #expect(again.garbageChunks == 0 && again.bytesFreed == 0)
        // Alice can store f1 again: it is uploaded afresh and reads back.
        let back = try await commitPacked(alice, "Documents/back.bin", files[1])
        #expect(try await downloadBytes(alice, version: try #require(back.version?.id)) == files[1])
        await server.stop()
    }

    @Test func theServerCollectsSoonAfterATrashIsEmptied() async throws {
        let server = try await TestServer.start(configure: { $0.collectionDelay = .milliseconds(200) })
        try await server.user("alice")
        let (alice, _) = try await server.device("alice")
        var rng = SeededRandom.forTest("gc.scheduled")
        let r = try await commitPacked(alice, "Documents/big.bin", rng.bytes(800_000))
        let before = try await server.services.chunks.footprint()
        _ = try await alice.delete(notes, item: r.item.id)
        #expect(try await alice.emptyTrash(notes).items == 1)
        let given = try await eventually(timeout: .seconds(20)) { try await server.services.chunks.footprint() <= before - 800_000 }
        #expect(given, "the server collected by itself")
        await server.stop()
    }

    /// #45 row 8: every emptied trash woke a full collection 30 s later, with no limit — a loop
    /// of make, delete, empty kept one running. Woken collections are now at least
    /// `collectionGap` apart; the first still comes soon.
    @Test func emptyingTrashesInALoopWakesOneCollectionPerGap() async throws {
        let server = try await TestServer.start(configure: { $0.collectionDelay = .milliseconds(100); $0.collectionGap = .seconds(60) })
        try await server.user("alice")
        let (alice, _) = try await server.device("alice")
        var rng = SeededRandom.forTest("gc.gap")
        func cycle() async throws {
            let r = try await commitPacked(alice, "Documents/churn-\(UUID().uuidString.prefix(6)).bin", rng.bytes(20_000))
            _ = try await alice.delete(notes, item: r.item.id)
            #expect(try await alice.emptyTrash(notes).items == 1)
        }
        try await cycle()
        #expect(await eventually(timeout: .seconds(20)) { await server.services.collectionRuns.value == 1 }, "the first comes soon")
        for _ in 0..<8 { try await cycle() }
        let more = await ever(within: .seconds(3)) { await server.services.collectionRuns.value > 1 }
        #expect(!more, "eight more emptied trashes within the gap woke no second collection")
        // The wait itself: the delay alone the first time, else at least until the gap is over.
        #expect(ChunkCollection.waitAfterWake(sinceLast: nil, delay: .seconds(30), gap: .seconds(600)) == .seconds(30))
        #expect(ChunkCollection.waitAfterWake(sinceLast: .seconds(100), delay: .seconds(30), gap: .seconds(600)) == .seconds(500))
        #expect(ChunkCollection.waitAfterWake(sinceLast: .seconds(590), delay: .seconds(30), gap: .seconds(600)) == .seconds(30))
        #expect(ChunkCollection.waitAfterWake(sinceLast: .seconds(7200), delay: .seconds(30), gap: .seconds(600)) == .seconds(30))
        await server.stop()
    }

    @Test(arguments: StoreKind.available, DatabaseKind.available)
    func uploadsNeverCommittedAreReleasedAfterADay(_ kind: StoreKind, _ db: DatabaseKind) async throws {
        let clock = HandClock()
        guard let database = try await db.fresh() else { return }
        let server = try await TestServer.start(clock: { clock.now }, database: database, blobs: kind.blobs)
        try await server.user("alice")
        let (alice, _) = try await server.device("alice")
        var rng = SeededRandom.forTest("gc.uncommitted")
        let orphan = rng.bytes(300_000), kept = rng.bytes(200_000)
        let m = Manifest.of(orphan)
        var offset = 0
        var named: [(ContentHash, [UInt8])] = []
        for ch in m.chunks { named.append((ch.hash, Array(orphan[offset..<offset + ch.size]))); offset += ch.size }
        try await alice.uploadChunks(named: named)  // and then the device goes away: no commit
        try await commitPacked(alice, "Documents/kept.bin", kept)
        #expect(try await alice.account().used == 500_000)

        // Within the day the upload is kept: its commit may still come.
        clock.advance(days: 0.9)
        let early = try await server.services.collectGarbage()
        #expect(early.releasedUploads == 0 && early.garbageChunks == 0)
        #expect(try await alice.missingChunks(m.chunks.map(\.hash)).isEmpty)

        clock.advance(days: 0.2)
        let dry = try await server.services.collectGarbage(dryRun: true)
        #expect(dry.releasedUploads == m.chunks.count && dry.releasedBytes == 300_000)
        #expect(try await alice.account().used == 500_000, "a dry run releases nothing")
        let late = try await server.services.collectGarbage()
        #expect(late.releasedUploads == m.chunks.count && late.releasedBytes == 300_000 && late.garbageBytes == 300_000, "\(late)")
        #expect(try await alice.account().used == 200_000, "usage stays exact")
        #expect(Set(try await alice.missingChunks(m.chunks.map(\.hash))) == Set(m.chunks.map(\.hash)))
        let keptVersion = try #require(try await alice.changes(notes, after: 0).items.first?.current?.id)
        #expect(try await downloadBytes(alice, version: keptVersion) == kept)
        await server.stop()
    }

    /// Seeded: while collections run back to back, alice makes and empties garbage and bob
    /// uploads the same contents (found stored, so not written again) and commits them. Every
    /// chunk anyone holds at the end reads back, and every file bob committed downloads whole.
    @Test(arguments: StoreKind.available, DatabaseKind.available)
    func uploadsRacingCollectionsNeverLoseAChunk(_ kind: StoreKind, _ db: DatabaseKind) async throws {
        guard let database = try await db.fresh() else { return }
        let server = try await TestServer.start(database: database, blobs: kind.blobs)
        try await server.user("alice")
        try await server.user("bob")
        let (alice, _) = try await server.device("alice")
        let (bob, _) = try await server.device("bob", name: "desktop")
        var rng = SeededRandom.forTest("gc.race")
        let contents = (0..<40).map { _ in rng.bytes(Int.random(in: 20_000...300_000, using: &rng)) }
        let services = server.services
        let (runs, bobs) = try await raceCollections(services, alice: alice, bob: bob, contents: contents)
        for (v, content) in bobs { #expect(try await downloadBytes(bob, version: v) == content) }
        #expect(try await alice.account().used == 0)
        print("[gc.race] \(runs) collection(s) ran beside \(contents.count) rounds")
        await server.stop()
    }

    /// After a compaction a restart finds the same chunks, and nothing a rewrite left is taken
    /// for a crash's leftover. (What every store promises is in `ChunkStoreContractTests`.)
    @Test func aCompactedFolderReopensWithNothingLeftOver() async throws {
        let dir = try TempDirectory("ubiq-gc-store")
        defer { dir.remove() }
        let store = try FolderChunkStore(root: dir.url.appendingPathComponent("chunks"), recentBytes: 0)
        var rng = SeededRandom.forTest("gc.reopen")
        let chunks = (0..<30).map { _ in rng.bytes(8_000) }.map { (ContentHash.of($0), $0) }
        try await store.putMany(chunks)
        _ = try await store.forget(chunks[..<20].map(\.0))
        #expect(try await store.compact().rewritten == 1)
        let reopened = try FolderChunkStore(root: dir.url.appendingPathComponent("chunks"), recentBytes: 0)
        #expect(try await reopened.removeOrphans(try reopened.leftovers()).files == 0)
        for (h, b) in chunks[20...] { #expect(try await reopened.get(h) == b) }
    }
}
