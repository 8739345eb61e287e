import Foundation
import Testing
import UbiqCore
@testable import UbiqStorage
import UbiqTesting

/// The chunk folder: packs for batches, loose files for single chunks, both read back verified
/// after the store is reopened.
@Suite("Chunk store")
struct ChunkStoreTests {
    /// A pack no index row names and a temporary file (what a crash mid-write leaves) are
    /// removed; every stored chunk — in packs, loose, or stored after the listing — stays readable.
    @Test func leftoversOfAnInterruptedWriteAreRemovedAndNothingElse() async throws {
        let dir = try TempDirectory("ubiq-chunkstore")
        defer { dir.remove() }
        var rng = SeededRandom.forTest("chunkstore.orphans")
        let before = (0..<3).map { _ in (0..<50).map { _ in rng.bytes(Int.random(in: 1...20_000, using: &rng)) } }
        let loose = rng.bytes(3000)
        do {
            let store = try FolderChunkStore(root: dir.url)
            for batch in before { try await store.putMany(batch.map { (ContentHash.of($0), $0) }) }
            try await store.put(ContentHash.of(loose), loose)
        }
        // What a killed process leaves: a written pack whose index rows never committed, a temporary file.
        let orphan = rng.bytes(70_000)
        let orphanPack = dir.url.appendingPathComponent("packs/\(UUID().uuidString.lowercased()).pack")
        try Data(orphan).write(to: orphanPack)
        let temporary = dir.url.appendingPathComponent("tmp/\(ContentHash.of(loose).hex).12345")
        try Data(loose.prefix(100)).write(to: temporary)

        let store = try FolderChunkStore(root: dir.url, recentBytes: 0)
        let candidates = try store.leftovers()
        #expect(candidates.packs.count == 4 && candidates.temporaries.count == 1)
        let after = (0..<50).map { _ in rng.bytes(Int.random(in: 1...20_000, using: &rng)) }
        try await store.putMany(after.map { (ContentHash.of($0), $0) })  // written after the listing
        let (files, bytes) = try await store.removeOrphans(candidates)
        #expect(files == 2 && bytes == 70_100)
        #expect(!FileManager.default.fileExists(atPath: orphanPack.path) && !FileManager.default.fileExists(atPath: temporary.path))
        let packs = try FileManager.default.contentsOfDirectory(atPath: dir.url.appendingPathComponent("packs").path)
        #expect(packs.count == 4)
        for b in before.joined() + after { #expect(try await store.get(ContentHash.of(b)) == b) }
        #expect(try await store.get(ContentHash.of(loose)) == loose)
        // Nothing more to remove the next time.
        #expect(try await store.removeOrphans(try store.leftovers()) == (0, 0))
    }

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
        let store = try FolderChunkStore(root: dir.url, recentBytes: 0)
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
        let store = try FolderChunkStore(root: dir.url, recentBytes: 0)  // every read from disk
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

    /// The chunks of the batches stored last are served from memory (the bytes that were
    /// written), older ones from disk, mixed in one answer in the order asked.
    @Test func recentBatchesAreServedFromMemoryAndOlderOnesFromDisk() async throws {
        let dir = try TempDirectory("ubiq-chunkstore-recent")
        defer { dir.remove() }
        var rng = SeededRandom.forTest("chunkstore.recent")
        let store = try FolderChunkStore(root: dir.url, recentBytes: 100_000)
        // Four batches of 40 KB: the budget holds the last two.
        var batches: [[[UInt8]]] = []
        for _ in 0..<4 {
            let batch = (0..<8).map { _ in rng.bytes(5_000) }
            try await store.putMany(batch.map { (ContentHash.of($0), $0) })
            batches.append(batch)
        }
        // The first byte of every chunk flipped on disk: what is still remembered comes back
        // intact, the rest is read from disk and found corrupt (verified) or comes back damaged.
        let packs = dir.url.appendingPathComponent("packs")
        for name in try FileManager.default.contentsOfDirectory(atPath: packs.path) {
            let h = try FileHandle(forUpdating: packs.appendingPathComponent(name))
            let size = try h.seekToEnd()
            for at in stride(from: UInt64(0), to: size, by: 5_000) {
                try h.seek(toOffset: at)
                let byte = try h.read(upToCount: 1)![0]
                try h.seek(toOffset: at)
                try h.write(contentsOf: [byte ^ 0xFF])
            }
            try h.close()
        }
        let remembered = (batches[2] + batches[3]).shuffled(using: &rng)
        #expect(try await store.getMany(remembered.map { ContentHash.of($0) }, limit: 1 << 20) == remembered)
        for old in batches[0] + batches[1] {
            await #expect(throws: StorageError.self) { _ = try await store.getMany([ContentHash.of(old)], limit: 1 << 20) }
        }
        let mixed = [batches[0][3], batches[3][1], batches[1][5], batches[2][0]]
        let got = try await store.getMany(mixed.map { ContentHash.of($0) }, limit: 1 << 20, verify: false)
        #expect(got[1] == batches[3][1] && got[3] == batches[2][0])
        #expect(got[0]?.first == batches[0][3][0] ^ 0xFF && got[0]?.dropFirst() == batches[0][3].dropFirst())
        #expect(got[2]?.first == batches[1][5][0] ^ 0xFF)
        // The limit counts remembered chunks too.
        await #expect(throws: StorageError.self) { _ = try await store.getMany(remembered.map { ContentHash.of($0) }, limit: 79_999) }
    }

    /// Dropping an old batch keeps a chunk that a newer remembered batch also holds (two
    /// uploads of the same chunk racing), and a batch over the whole budget is not kept.
    @Test func aChunkInTwoRememberedBatchesStaysWithTheNewer() {
        var rng = SeededRandom.forTest("chunkstore.recent.twice")
        let recent = RecentChunks(budget: 40_000)  // batches of 15,000 bytes take 16,384 (whole pages)
        let a = (0..<3).map { _ in rng.bytes(5_000) }, b = (0..<3).map { _ in rng.bytes(5_000) }
        func add(_ chunks: [[UInt8]]) {  // as `putMany` stores a batch of new chunks
            let (pack, ranges) = PackBytes.copying(chunks.map { $0[...] })!
            recent.add(pack, chunks: Array(zip(chunks.map { ContentHash.of($0) }, ranges)))
        }
        add(a)
        add([a[0]] + b.prefix(2))  // a[0] again, in the newer batch
        let c = (0..<3).map { _ in rng.bytes(5_000) }
        add(c)  // 3 × 16,384 > 40,000: `a` is dropped
        let all = (a + b + c).map { ContentHash.of($0) }
        let found = recent.lookup(all)
        #expect(found[0].map(Array.init) == a[0])
        #expect(found[1] == nil && found[2] == nil)
        #expect(found[3].map(Array.init) == b[0] && found[5] == nil)
        #expect((6..<9).allSatisfy { found[$0].map(Array.init) == c[$0 - 6] })
        add([rng.bytes(40_001)])
        #expect(recent.lookup(all).count == 6)  // unchanged
    }

    /// A received body that is nearly all new chunks becomes the pack as it came, framing and
    /// all: written and remembered without a copy, its chunks read back at their places after
    /// reopening. A body of mostly known chunks is not kept whole: its few new bytes are copied
    /// into a pack of their own, so the memory budget is not spent on what was already stored.
    @Test func aNewBodyIsStoredAsItCameAndAMostlyKnownOneIsCopied() async throws {
        let dir = try TempDirectory("ubiq-chunkstore-body")
        defer { dir.remove() }
        var rng = SeededRandom.forTest("chunkstore.body")
        func body(_ chunks: [[UInt8]]) -> (PackBytes, [(ContentHash, Range<Int>)]) {
            var framed: [UInt8] = [], where_: [(ContentHash, Range<Int>)] = []
            for c in chunks {
                framed += rng.bytes(68)  // stands for a chunk's name and length
                where_.append((ContentHash.of(c), framed.count..<framed.count + c.count))
                framed += c
            }
            let pack = PackBytes(capacity: framed.count)!
            #expect(framed.withUnsafeBytes { pack.append($0) })
            return (pack, where_)
        }
        func isInside(_ chunk: PackedChunk, _ pack: PackBytes) -> Bool {
            let start = pack.withBytes { UInt(bitPattern: $0.baseAddress!) }
            return chunk.withUnsafeBytes { (start..<start + UInt(pack.count)).contains(UInt(bitPattern: $0.baseAddress!)) }
        }
        let fresh = (0..<40).map { _ in rng.bytes(Int.random(in: 1...60_000, using: &rng)) }
        let small = rng.bytes(1_000)
        do {
            let store = try FolderChunkStore(root: dir.url)
            let (first, chunks) = body(fresh)
            try await store.putMany(body: first, chunks: chunks, hashesChecked: false)
            let kept = store.recent.lookup(chunks.map(\.0))
            #expect(kept.count == fresh.count)
            #expect(kept.values.allSatisfy { isInside($0, first) })
            // Mostly known: only `small` is new, and it is copied out.
            let (second, more) = body(Array(fresh.prefix(20)) + [small])
            try await store.putMany(body: second, chunks: more, hashesChecked: false)
            let smallKept = try #require(store.recent.lookup([ContentHash.of(small)])[0])
            #expect(Array(smallKept) == small && !isInside(smallKept, second))
            // A chunk that does not hash to its name stores nothing of its body.
            let (third, named) = body([rng.bytes(5_000)])
            await #expect(throws: StorageError.self) {
                try await store.putMany(body: third, chunks: [(ContentHash.of([1]), named[0].1)], hashesChecked: false)
            }
            #expect(try await store.has(ContentHash.of([1])) == false)
        }
        let store = try FolderChunkStore(root: dir.url, recentBytes: 0)  // every read from disk
        let all = fresh + [small]
        let got = try await store.getMany(all.map { ContentHash.of($0) }, limit: 16 << 20)
        #expect(got == all.map { Optional($0) })
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.appendingPathComponent("packs").path).count == 2)
    }
    /// Content another account stored already costs the same writes as new content (written,
    /// flushed, then dropped), so an upload's timing does not tell whether anyone holds it; and
    /// nothing of the stand-in stays on disk.
    @Test func storedContentCostsTheWritesOfNewContentAndLeavesNothing() async throws {
        let dir = try TempDirectory("ubiq-chunkstore-same-cost")
        defer { dir.remove() }
        var rng = SeededRandom.forTest("chunkstore.samecost")
        let store = try FolderChunkStore(root: dir.url)
        func files() throws -> [String] {
            try FileManager.default.subpathsOfDirectory(atPath: dir.url.path).filter { !$0.hasPrefix("packs.sqlite") }.sorted()
        }
        let batch = (0..<30).map { _ in rng.bytes(Int.random(in: 1...40_000, using: &rng)) }
        let framed = PackBytes(capacity: batch.reduce(0) { $0 + $1.count })!
        var ranges: [(ContentHash, Range<Int>)] = []
        for c in batch {
            let start = framed.count
            #expect(c.withUnsafeBytes { framed.append($0) })
            ranges.append((ContentHash.of(c), start..<framed.count))
        }
        let loose = rng.bytes(9_000)
        let slices = (0..<5).map { _ in rng.bytes(3_000) }
        // New content: one pack per batch, one loose file.
        try await store.putMany(body: framed, chunks: ranges, hashesChecked: false)
        try await store.putMany(slices.map { (ContentHash.of($0), $0) })
        try await store.put(ContentHash.of(loose), loose)
        let fresh = store.durableWrites
        #expect(fresh == 3)
        let stored = try files()
        // The same content again (as another account would send it): the same writes, nothing kept.
        try await store.putMany(body: framed, chunks: ranges, hashesChecked: false)
        try await store.putMany(slices.map { (ContentHash.of($0), $0) })
        try await store.put(ContentHash.of(loose), loose)
        #expect(store.durableWrites == 2 * fresh)
        #expect(try files() == stored, "a stand-in stayed on disk")
        // Partly stored: the stored part is written as a stand-in beside the new part's pack.
        let more = rng.bytes(2_000)
        try await store.putMany([(ContentHash.of(slices[0]), slices[0]), (ContentHash.of(more), more)])
        #expect(store.durableWrites == 2 * fresh + 2)
        #expect(try await store.get(ContentHash.of(more)) == more)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.appendingPathComponent("tmp").path).isEmpty)
    }
}
