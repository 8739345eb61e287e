import Foundation
import Testing
import UbiqCore
import UbiqStorage
import UbiqTesting

/// The chunk folder: packs for batches, loose files for single chunks, both read back verified
/// after the store is reopened.
@Suite("Chunk store")
struct ChunkStoreTests {
    @Test func packsAndLooseChunksSurviveReopeningAndCorruptionIsReported() async throws {
        let dir = try TempDirectory("ubiq-chunkstore")
        defer { dir.remove() }
        var rng = SeededRandom.forTest("chunkstore")
        let batch = (0..<200).map { _ in rng.bytes(Int.random(in: 1...20_000, using: &rng)) }
        let loose = rng.bytes(5000)
        do {
            let store = try FolderChunkStore(root: dir.url)
            try await store.putMany(batch.map { (ContentHash.of($0), $0) })
            try await store.put(ContentHash.of(loose), loose)
            // Bytes that do not hash to their name store nothing.
            let bad = [(ContentHash.of([1, 2, 3]), [UInt8]([1, 2, 4]))]
            await #expect(throws: StorageError.self) { try await store.putMany(bad) }
            #expect(try await store.has(ContentHash.of([1, 2, 3])) == false)
        }
        let store = try FolderChunkStore(root: dir.url)
        for b in batch { #expect(try await store.get(ContentHash.of(b)) == b) }
        #expect(try await store.get(ContentHash.of(loose)) == loose)
        #expect(try await store.get(ContentHash.of([9, 9])) == nil)
        // Storing the same chunks again writes no new pack.
        let packs = dir.url.appendingPathComponent("packs")
        let before = try FileManager.default.contentsOfDirectory(atPath: packs.path).count
        try await store.putMany(batch.prefix(10).map { (ContentHash.of($0), $0) })
        #expect(try FileManager.default.contentsOfDirectory(atPath: packs.path).count == before)
        // A flipped byte in a pack is found on read, never served.
        let pack = try #require(try FileManager.default.contentsOfDirectory(atPath: packs.path).first)
        let h = try FileHandle(forUpdating: packs.appendingPathComponent(pack))
        try h.seek(toOffset: 0)
        let first = try h.read(upToCount: 1)![0]
        try h.seek(toOffset: 0)
        try h.write(contentsOf: [first ^ 0xFF])
        try h.close()
        await #expect(throws: StorageError.self) { _ = try await store.get(ContentHash.of(batch[0])) }
        await #expect(throws: StorageError.self) { _ = try await store.getMany([ContentHash.of(batch[0])], limit: 1 << 20) }
        // Unverified (for a client that checks every byte itself) the flipped byte comes out as stored.
        let raw = try await store.getMany([ContentHash.of(batch[0])], limit: 1 << 20, verify: false)
        #expect(raw[0]?.first == first ^ 0xFF && raw[0]?.dropFirst() == batch[0].dropFirst())
    }

    /// `getMany` reads runs of requests as spans of a pack: any order, repeats, gaps, chunks of
    /// several packs and loose ones, absent ones, and the size limit.
    @Test func manyChunksInAnyOrderComeBackAsStored() async throws {
        let dir = try TempDirectory("ubiq-chunkstore-spans")
        defer { dir.remove() }
        var rng = SeededRandom.forTest("chunkstore.spans")
        let store = try FolderChunkStore(root: dir.url)
        var all: [[UInt8]] = []
        for _ in 0..<4 {  // four packs, some chunks big enough to make gaps worth skipping
            let batch = (0..<60).map { _ in rng.bytes(Int.random(in: 1...(Bool.random(using: &rng) ? 4_000 : 300_000), using: &rng)) }
            try await store.putMany(batch.map { (ContentHash.of($0), $0) })
            all += batch
        }
        let loose = rng.bytes(777)
        try await store.put(ContentHash.of(loose), loose)
        all.append(loose)
        let absent = ContentHash.of([1, 2, 3, 4])
        for round in 0..<40 {
            var asked: [[UInt8]?] = []
            var total = 0
            for _ in 0..<Int.random(in: 1...80, using: &rng) {
                if Int.random(in: 0..<20, using: &rng) == 0 { asked.append(nil); continue }
                // Mostly runs in stored order (as a download asks), sometimes a jump.
                let i = round % 2 == 0 ? Int.random(in: 0..<all.count, using: &rng) : min(all.count - 1, asked.count + Int.random(in: 0...2, using: &rng))
                asked.append(all[i])
                total += all[i].count
            }
            let hashes = asked.map { $0.map { ContentHash.of($0) } ?? absent }
            let got = try await store.getMany(hashes, limit: total, verify: Bool.random(using: &rng))
            #expect(got == asked, "round \(round)")
            if total > 0 {
                await #expect(throws: StorageError.self) { _ = try await store.getMany(hashes, limit: total - 1) }
            }
        }
    }
}
