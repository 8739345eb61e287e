import Foundation
import UbiqCore

/// The chunks of the last few batches stored, kept in memory up to a byte budget, oldest
/// dropped first. Each batch's chunks are copied into one buffer of their own: slices of the
/// request body would keep the whole body alive (up to 16 MiB) for however few chunks of it were
/// new, so the budget would not bound the memory.
///
/// A device that downloads a file while another device of the account uploads it asks for each
/// chunk moments after it was stored: served from here, those bytes are not read back from disk
/// (packs are written past the page cache), which measured as ~1 GiB of reads competing with
/// the writes of a 1 GiB transfer. Chunks are immutable, so an entry never goes stale; who may
/// read a chunk is decided before the store is asked.
final class RecentChunks: @unchecked Sendable {
    private let lock = NSLock()
    private let budget: Int
    private var chunks: [ContentHash: (batch: Int, bytes: ArraySlice<UInt8>)] = [:]
    private var batches: [(number: Int, hashes: [ContentHash], bytes: Int)] = []
    private var held = 0
    private var added = 0

    /// Keeps up to `budget` bytes of chunks (0 keeps none).
    init(budget: Int) { self.budget = budget }

    /// Remembers a stored batch's chunks, dropping the oldest batches beyond the budget.
    func add(_ batch: [(ContentHash, ArraySlice<UInt8>)]) {
        let bytes = batch.reduce(0) { $0 + $1.1.count }
        guard budget > 0, bytes <= budget else { return }
        var copy: [UInt8] = []
        copy.reserveCapacity(bytes)
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(batch.count)
        for (_, b) in batch { ranges.append(copy.count..<copy.count + b.count); copy.append(contentsOf: b) }
        lock.lock()
        defer { lock.unlock() }
        while held + bytes > budget, !batches.isEmpty {
            let old = batches.removeFirst()
            held -= old.bytes
            // A chunk that came again in a newer batch stays, as that batch's.
            for h in old.hashes where chunks[h]?.batch == old.number { chunks[h] = nil }
        }
        added += 1
        for ((h, _), r) in zip(batch, ranges) { chunks[h] = (added, copy[r]) }
        batches.append((added, batch.map(\.0), bytes))
        held += bytes
    }

    /// The remembered chunks among `hashes`, by position.
    func lookup(_ hashes: [ContentHash]) -> [Int: ArraySlice<UInt8>] {
        lock.lock()
        defer { lock.unlock() }
        guard !chunks.isEmpty else { return [:] }
        var found: [Int: ArraySlice<UInt8>] = [:]
        for (i, h) in hashes.enumerated() { if let c = chunks[h] { found[i] = c.bytes } }
        return found
    }
}
