import Foundation
import NIOCore
import UbiqCore

/// The chunks of one fetch answer, left where they arrived (one buffer) rather than copied out
/// one by one; each was checked against the hash it was asked for. A layer that transforms
/// what arrived (opens sealed chunks) hands its own pieces instead.
public struct FetchedChunks: Sendable {
    enum Storage: Sendable {
        /// Where each chunk lies among the buffer's readable bytes, in the order asked.
        case arrived(ByteBuffer, [Range<Int>])
        case pieces([Data])
    }
    let storage: Storage

    /// Chunks gathered in one new buffer.
    public init(chunks: [[UInt8]]) {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(chunks.reduce(0) { $0 + $1.count })
        var ranges: [Range<Int>] = []
        for c in chunks {
            ranges.append(buffer.writerIndex..<buffer.writerIndex + c.count)
            buffer.writeBytes(c)
        }
        self.init(buffer: buffer, ranges: ranges)
    }

    /// Chunks each in its own piece, kept as they are (no copy: an opened chunk is already a
    /// new allocation, and gathering a big answer's into one buffer faulted in fresh pages for
    /// every byte).
    public init(pieces: [Data]) { storage = .pieces(pieces) }

    init(buffer: ByteBuffer, ranges: [Range<Int>]) { storage = .arrived(buffer, ranges) }

    /// How many chunks.
    public var count: Int {
        switch storage {
        case .arrived(_, let ranges): ranges.count
        case .pieces(let pieces): pieces.count
        }
    }

    /// Calls `body` with chunk `i`'s bytes (valid only during the call).
    public func withBytes<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch storage {
        case .arrived(let buffer, let ranges):
            try buffer.withUnsafeReadableBytes { all in try body(UnsafeRawBufferPointer(rebasing: all[ranges[i]])) }
        case .pieces(let pieces):
            try pieces[i].withUnsafeBytes { try body($0) }
        }
    }

    /// Chunk `i`'s bytes, copied out.
    public func bytes(_ i: Int) -> [UInt8] { withBytes(i) { Array($0) } }
}
