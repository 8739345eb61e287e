import NIOCore
import UbiqCore

/// The chunks of one fetch answer, left where they arrived (one buffer) rather than copied out
/// one by one; each was checked against the hash it was asked for.
public struct FetchedChunks: Sendable {
    let buffer: ByteBuffer
    /// Where each chunk lies among the buffer's readable bytes, in the order asked.
    let ranges: [Range<Int>]

    /// Chunks gathered in one new buffer (a layer that transforms what arrived, e.g. opens
    /// sealed chunks).
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

    init(buffer: ByteBuffer, ranges: [Range<Int>]) {
        self.buffer = buffer
        self.ranges = ranges
    }

    /// How many chunks.
    public var count: Int { ranges.count }

    /// Calls `body` with chunk `i`'s bytes (valid only during the call).
    public func withBytes<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try buffer.withUnsafeReadableBytes { all in try body(UnsafeRawBufferPointer(rebasing: all[ranges[i]])) }
    }

    /// Chunk `i`'s bytes, copied out.
    public func bytes(_ i: Int) -> [UInt8] { withBytes(i) { Array($0) } }
}
