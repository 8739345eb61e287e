import Foundation
import UbiqCore

/// A whole-content SHA-256 computed on its own serial queue while the caller goes on (reading,
/// chunking, writing): `update` hands over an immutable array (no copy) and returns at once,
/// `finalize` waits for everything handed over. At most `window` pieces wait at a time, so a
/// slow queue holds the caller back instead of buffering a whole file.
public final class BackgroundHash: @unchecked Sendable {
    private let queue = DispatchQueue(label: "ubiq.hash.whole")
    private let room: DispatchSemaphore
    private var hash = StreamingHash()  // touched only on `queue`

    public init(window: Int = 8) { room = DispatchSemaphore(value: window) }

    /// Adds `bytes[range]` (in order) to the hash, asynchronously.
    public func update(_ bytes: [UInt8], range: Range<Int>? = nil) {
        room.wait()
        queue.async {
            bytes.withUnsafeBytes { raw in self.hash.update(UnsafeRawBufferPointer(rebasing: raw[range ?? 0..<raw.count])) }
            self.room.signal()
        }
    }

    /// Adds several pieces (in order) in one hand-over: one wake-up of the queue for a whole
    /// window of chunks instead of one per chunk.
    public func update(pieces: [[UInt8]]) {
        guard !pieces.isEmpty else { return }
        room.wait()
        queue.async {
            for p in pieces { p.withUnsafeBytes { self.hash.update($0) } }
            self.room.signal()
        }
    }

    /// The hash of everything handed over, after the queue has caught up.
    public func finalize() -> ContentHash {
        queue.sync { hash.finalize() }
    }
}

/// The chunk hashes of a file computed on their own serial queue, in order: the caller hands
/// over each buffer with the ranges it cut, and collects the list at the end.
public final class BackgroundChunkHashes: @unchecked Sendable {
    private let queue = DispatchQueue(label: "ubiq.hash.chunks")
    private let room: DispatchSemaphore
    private var chunks: [ChunkRef] = []  // touched only on `queue`

    public init(window: Int = 8) { room = DispatchSemaphore(value: window) }

    /// Hashes `bytes[r]` for each range, appending the chunks in order, asynchronously.
    public func add(_ bytes: [UInt8], ranges: [Range<Int>]) {
        guard !ranges.isEmpty else { return }
        room.wait()
        queue.async {
            bytes.withUnsafeBytes { raw in
                for r in ranges { self.chunks.append(ChunkRef(hash: ContentHash.of(buffer: UnsafeRawBufferPointer(rebasing: raw[r])), size: r.count)) }
            }
            self.room.signal()
        }
    }

    /// Every chunk handed over, in order, after the queue has caught up.
    public func finish() -> [ChunkRef] {
        queue.sync { chunks }
    }
}
