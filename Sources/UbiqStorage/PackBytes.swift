import CFileSupport
import Foundation

/// The bytes of one pack in page-aligned memory (a reusable transfer block when it is 1–16 MiB,
/// see `ubiq_block_alloc_aligned`): written to disk from here as they are (direct I/O wants
/// aligned memory) and then kept by `RecentChunks` for the downloads that follow.
///
/// A pack is either a batch's new chunks copied one after another (`copying`), or a request body
/// received straight into it (`init(capacity:)` and `append`) whose chunks stay where they
/// arrived, between their framing: then the body is stored without being copied at all.
public final class PackBytes: @unchecked Sendable {
    /// Direct I/O works in whole blocks of this size.
    static let block = 4096
    let base: UnsafeMutableRawPointer
    /// The bytes filled so far.
    public private(set) var count = 0
    /// The memory held: `count` fits, and so does `count` rounded up to whole blocks.
    public let capacity: Int

    /// Empty, with room for `capacity` bytes; nil if memory is exhausted.
    public init?(capacity: Int) {
        let rounded = max(Self.block, (capacity + Self.block - 1) / Self.block * Self.block)
        guard let mem = ubiq_block_alloc_aligned(rounded) else { return nil }
        base = mem
        self.capacity = rounded
    }

    deinit { ubiq_block_free(base) }

    /// Appends `bytes`; false (nothing appended) if they do not fit.
    public func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count <= capacity - count else { return false }
        if let src = bytes.baseAddress, bytes.count > 0 { (base + count).copyMemory(from: src, byteCount: bytes.count) }
        count += bytes.count
        return true
    }

    /// The parts copied one after another, and where each lies.
    static func copying<S: Collection>(_ parts: S) -> (PackBytes, [Range<Int>])? where S.Element == ArraySlice<UInt8> {
        let size = parts.reduce(0) { $0 + $1.count }
        guard let pack = PackBytes(capacity: size) else { return nil }
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(parts.count)
        for p in parts {
            let start = pack.count
            _ = p.withUnsafeBytes { pack.append($0) }
            ranges.append(start..<pack.count)
        }
        return (pack, ranges)
    }

    /// The bytes of `range` (valid only during the call).
    public func withBytes<R>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count))
    }

    /// All the bytes filled (valid only during the call).
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try withBytes(0..<count, body) }

    /// `count` rounded up to whole blocks, the bytes past `count` zeroed: what a direct write sends.
    func paddedForWrite() -> Int {
        let padded = max(Self.block, (count + Self.block - 1) / Self.block * Self.block)
        (base + count).initializeMemory(as: UInt8.self, repeating: 0, count: padded - count)
        return padded
    }
}

/// One chunk of a `PackBytes` (which it keeps alive).
struct PackedChunk: RandomAccessCollection, Sendable {
    let pack: PackBytes
    let range: Range<Int>
    var startIndex: Int { 0 }
    var endIndex: Int { range.count }
    subscript(i: Int) -> UInt8 { pack.base.load(fromByteOffset: range.lowerBound + i, as: UInt8.self) }

    /// The chunk's bytes (valid only during the call).
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try pack.withBytes(range, body) }
}
