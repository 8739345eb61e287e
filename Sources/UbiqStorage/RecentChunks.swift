import Foundation
import UbiqCore

/// The chunks of the last few batches stored, kept in memory up to a byte budget, oldest
/// dropped first. Each batch is the pack it was written to disk from (`PackBytes`: the batch's
/// new chunks, or the request body they came in when nearly all of it was new), and the budget
/// counts the whole pack, so it bounds the memory.
///
/// A device that downloads a file while another device of the account uploads it asks for each
/// chunk moments after it was stored: served from here, those bytes are not read back from disk
/// (packs are written past the page cache), which measured as ~1 GiB of reads competing with
/// the writes of a 1 GiB transfer. Chunks are immutable, so an entry never goes stale; who may
/// read a chunk is decided before the store is asked.
final class RecentChunks: @unchecked Sendable {
    private let lock = NSLock()
    private let budget: Int
    private var chunks: [ContentHash: (batch: Int, chunk: PackedChunk)] = [:]
    private var batches: [(number: Int, hashes: [ContentHash], bytes: Int)] = []
    private var held = 0
    private var added = 0

    /// Keeps up to `budget` bytes of chunks (0 keeps none).
    init(budget: Int) { self.budget = budget }

    /// Remembers a stored pack holding `chunks` (each where it lies in the pack), dropping the
    /// oldest batches beyond the budget.
    func add(_ pack: PackBytes, chunks parts: [(ContentHash, Range<Int>)]) {
        let bytes = pack.capacity
        guard budget > 0, bytes <= budget else { return }
        lock.lock()
        defer { lock.unlock() }
        while held + bytes > budget, !batches.isEmpty {
            let old = batches.removeFirst()
            held -= old.bytes
            // A chunk that came again in a newer batch stays, as that batch's.
            for h in old.hashes where chunks[h]?.batch == old.number { chunks[h] = nil }
        }
        added += 1
        for (h, r) in parts { chunks[h] = (added, PackedChunk(pack: pack, range: r)) }
        batches.append((added, parts.map(\.0), bytes))
        held += bytes
    }

    /// The remembered chunks among `hashes`, by position.
    func lookup(_ hashes: [ContentHash]) -> [Int: PackedChunk] {
        lock.lock()
        defer { lock.unlock() }
        guard !chunks.isEmpty else { return [:] }
        var found: [Int: PackedChunk] = [:]
        for (i, h) in hashes.enumerated() { if let c = chunks[h] { found[i] = c.chunk } }
        return found
    }
}
