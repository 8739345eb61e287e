import NIOCore
import UbiqCore

/// The chunks of one fetch answer, left where they arrived (one buffer) rather than copied out
/// one by one; each was checked against the hash it was asked for.
public struct FetchedChunks: Sendable {
    let buffer: ByteBuffer
    /// Where each chunk lies among the buffer's readable bytes, in the order asked.
    let ranges: [Range<Int>]

    /// How many chunks.
    public var count: Int { ranges.count }

    /// Calls `body` with chunk `i`'s bytes (valid only during the call).
    public func withBytes<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try buffer.withUnsafeReadableBytes { all in try body(UnsafeRawBufferPointer(rebasing: all[ranges[i]])) }
    }

    /// Chunk `i`'s bytes, copied out.
    public func bytes(_ i: Int) -> [UInt8] { withBytes(i) { Array($0) } }
}
