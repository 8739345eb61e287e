import Foundation
import UbiqCore

/// The chunk hashes of a file computed on a few serial queues ("lanes") while the caller goes
/// on reading and cutting: segment `k` is hashed on lane `k % lanes`, so a two-core machine
/// hashes a file on both cores, and `finish` returns the chunks in file order. Each segment is
/// an immutable array handed over without a copy; at most `window` segments wait at a time, so
/// slow lanes hold the caller back instead of buffering a whole file.
public final class BackgroundChunkHashes: @unchecked Sendable {
    private let lanes: [DispatchQueue]
    private let room: DispatchSemaphore
    private let lock = NSLock()
    private var done: [Int: [ChunkRef]] = [:]  // guarded by `lock`
    private var next = 0  // the caller's segment count (only the caller touches it)

    public init(lanes: Int = 2, window: Int = 8) {
        self.lanes = (0..<max(1, lanes)).map { DispatchQueue(label: "ubiq.hash.chunks.\($0)") }
        room = DispatchSemaphore(value: window)
    }

    /// Hashes `bytes[r]` for each range (one segment, in file order), asynchronously.
    public func add(_ bytes: [UInt8], ranges: [Range<Int>]) {
        guard !ranges.isEmpty else { return }
        let k = next
        next += 1
        room.wait()
        lanes[k % lanes.count].async {
            let refs = bytes.withUnsafeBytes { raw in
                ranges.map { ChunkRef(hash: ContentHash.of(buffer: UnsafeRawBufferPointer(rebasing: raw[$0])), size: $0.count) }
            }
            self.lock.withLock { self.done[k] = refs }
            self.room.signal()
        }
    }

    /// Every chunk handed over, in file order, after the lanes have caught up.
    public func finish() -> [ChunkRef] {
        for lane in lanes { lane.sync {} }
        return lock.withLock { (0..<next).flatMap { done[$0] ?? [] } }
    }
}
