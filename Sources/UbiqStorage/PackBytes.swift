import Foundation

/// The bytes of one pack — a batch's new chunks one after another — in page-aligned memory:
/// written to disk from here as they are (direct I/O wants aligned memory) and then kept by
/// `RecentChunks` for the downloads that follow, so a stored batch is copied once, not twice.
final class PackBytes: @unchecked Sendable {
    /// Direct I/O works in whole blocks of this size.
    static let block = 4096
    let base: UnsafeMutableRawPointer
    /// The pack's size.
    let count: Int
    /// `count` rounded up to whole blocks; the bytes past `count` are zeros.
    let capacity: Int
    /// Where each part lies, in order.
    let ranges: [Range<Int>]

    /// The parts copied one after another.
    init<S: Collection>(copying parts: S) where S.Element == ArraySlice<UInt8> {
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(parts.count)
        var size = 0
        for p in parts { ranges.append(size..<size + p.count); size += p.count }
        count = size
        capacity = max(Self.block, (size + Self.block - 1) / Self.block * Self.block)
        let mem = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: Self.block)
        for (p, r) in zip(parts, ranges) where !r.isEmpty { p.withUnsafeBytes { (mem + r.lowerBound).copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
        (mem + size).initializeMemory(as: UInt8.self, repeating: 0, count: capacity - size)
        base = mem
        self.ranges = ranges
    }

    deinit { base.deallocate() }

    /// The bytes of `range` (valid only during the call).
    func withBytes<R>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count))
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
