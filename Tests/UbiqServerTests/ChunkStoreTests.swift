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
    }
}
