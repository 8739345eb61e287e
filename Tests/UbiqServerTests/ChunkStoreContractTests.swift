import Foundation
import Testing
import UbiqCore
import UbiqServer
import UbiqStorage
import UbiqTesting

/// What every chunk store promises (`ChunkStore`), held to each kind with the same tests.
@Suite("Chunk store contract")
struct ChunkStoreContractTests {
    @Test(arguments: StoreKind.contract)
    func chunksGoInAndComeBackVerified(_ kind: StoreKind) async throws {
        let dir = try TempDirectory("ubiq-contract")
        defer { dir.remove() }
        guard let store = try await kind.make(in: dir) else { return }
        var rng = SeededRandom.forTest("contract.\(kind)")
        let a = rng.bytes(70_000), b = rng.bytes(3_000), c = rng.bytes(1)
        let (ha, hb, hc) = (ContentHash.of(a), ContentHash.of(b), ContentHash.of(c))
        try await store.put(ha, a)
        try await store.put(ha, a)  // again: fine
        #expect(try await store.get(ha) == a)
        #expect(try await store.has(ha))
        #expect(try await store.get(hb) == nil)
        #expect(try await !store.has(hb))
        // A batch with a repeat inside it and a chunk stored already.
        try await store.putMany([(hb, b), (ha, a), (hb, b), (hc, c)])
        #expect(try await store.getMany([hc, hb, ha, hc], limit: 1 << 20) == [c, b, a, c])
        // A chunk that does not hash to its name: refused, nothing of its batch stored.
        let d = rng.bytes(500), e = rng.bytes(600), f = rng.bytes(700)
        let bad = await #expect(throws: StorageError.self) { try await store.putMany([(ContentHash.of(d), d), (ContentHash.of(f), e)]) }
        #expect(bad?.code == .hashMismatch)
        #expect(try await store.get(ContentHash.of(d)) == nil)
        let single = await #expect(throws: StorageError.self) { try await store.put(ContentHash.of(d), e) }
        #expect(single?.code == .hashMismatch)
        // Visited in order, absent ones skipped; a limit is kept.
        var order: [Int] = []
        try await store.visitMany([hb, ContentHash.of(d), ha], limit: 1 << 20, verify: true) { i, bytes in
            order.append(i)
            let right = Array(bytes) == (i == 0 ? b : a)
            #expect(right)
        }
        #expect(order == [0, 2])
        let tooMuch = await #expect(throws: StorageError.self) { _ = try await store.getMany([ha, ha], limit: 100_000) }
        #expect(tooMuch?.code == .payloadTooLarge)
        // Listed for garbage collection: each chunk once.
        var listed: [StoredChunk] = []
        try await store.storedChunks(pageSize: 2) { listed += $0 }
        #expect(Set(listed) == [StoredChunk(hash: ha, size: a.count), StoredChunk(hash: hb, size: b.count), StoredChunk(hash: hc, size: c.count)])
    }

    /// Storing what is stored already costs a write like new content but leaves nothing behind.
    @Test(arguments: StoreKind.contract)
    func storingWhatIsStoredLeavesNothingBehind(_ kind: StoreKind) async throws {
        let dir = try TempDirectory("ubiq-contract")
        defer { dir.remove() }
        guard let store = try await kind.make(in: dir) else { return }
        var rng = SeededRandom.forTest("contract.standin.\(kind)")
        let chunks = (0..<20).map { _ in rng.bytes(10_000) }.map { (ContentHash.of($0), $0) }
        try await store.putMany(chunks)
        let size = try await store.footprint()
        #expect(size >= 200_000)
        try await store.putMany(chunks)
        try await store.put(chunks[0].0, chunks[0].1)
        #expect(try await store.footprint() == size)
    }

    /// Packs emptied go, packs mostly forgotten are rewritten, and readers running meanwhile
    /// always find every chunk not forgotten.
    @Test(arguments: StoreKind.contract)
    func compactionKeepsEveryChunkNotForgottenReadableMeanwhile(_ kind: StoreKind) async throws {
        let dir = try TempDirectory("ubiq-contract")
        defer { dir.remove() }
        guard let store = try await kind.make(in: dir) else { return }
        var rng = SeededRandom.forTest("contract.compaction.\(kind)")
        var all: [(ContentHash, [UInt8])] = []
        for _ in 0..<8 {
            let named = (0..<40).map { _ in rng.bytes(Int.random(in: 1_000...20_000, using: &rng)) }.map { (ContentHash.of($0), $0) }
            try await store.putMany(named)
            all += named
        }
        // Pack 0 goes whole, pack 1 keeps a quarter, the rest keep most.
        var doomed = Set(all[0..<40].map(\.0))
        for (i, c) in all[40..<80].enumerated() where i % 4 != 0 { doomed.insert(c.0) }
        for c in all[80...] where Int.random(in: 0..<10, using: &rng) == 0 { doomed.insert(c.0) }
        let kept = all.filter { !doomed.contains($0.0) }
        let before = try await store.footprint()

        let reads = Counter()
        let reader = Task {
            while !Task.isCancelled {
                let got: [[UInt8]?]
                do { got = try await store.getMany(kept.map(\.0), limit: 1 << 30) } catch where Task.isCancelled { break }
                for (i, g) in got.enumerated() where g != kept[i].1 { throw StorageError(.storageFailure, "chunk \(i) read wrong or not at all") }
                reads.add()
            }
            return reads.value
        }
        let forgotten = try await store.forget(Array(doomed))
        let c = try await store.compact()
        // At least two whole reads, the last begun after the compaction (bounded wait).
        let readsAfter = reads.value + 2
        _ = await eventually(timeout: .seconds(60)) { reads.value >= readsAfter }
        reader.cancel()
        #expect(try await reader.value > 0)
        // The bytes kept: a sealed record is its chunk and the seal (`ChunkSeal.overhead`).
        #expect(forgotten == all.filter { doomed.contains($0.0) }.reduce(0) { $0 + Int64($1.1.count + (kind.sealed ? ChunkSeal.overhead : 0)) })
        #expect(c.deleted == 1 && c.rewritten == 1, "\(c)")
        let after = try await store.footprint()
        #expect(before - after == c.bytesFreed && c.bytesFreed > 0, "\(before) → \(after), \(c)")
        for (h, b) in kept { #expect(try await store.get(h) == b) }
        for h in doomed { #expect(try await store.get(h) == nil) }
        var listed: [StoredChunk] = []
        try await store.storedChunks(pageSize: 7) { listed += $0 }
        #expect(Set(listed.map(\.hash)) == Set(kept.map(\.0)) && listed.count == kept.count)
        #expect(try await store.compact() == Compaction(), "nothing more to do")
    }
}

/// A count shared between tasks.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    var value: Int { lock.withLock { n } }
    func add() { lock.withLock { n += 1 } }
}
