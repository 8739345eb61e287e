/// Chunking one file on several cores with exactly the cuts of one pass from the start.
///
/// A cut depends only on the bytes since the previous cut, so a pass started anywhere finds the
/// same cuts as the pass from the start once the two share one cut: from there on they run in
/// step. The file is split into parts; part `k > 0` is chunked (and hashed) from its first byte
/// as if a chunk began there, and the part before it runs on past its end until one of its cuts
/// is also a cut (or the start) of part `k`: the chunks are spliced there. If that never happens
/// (in practice it does within a few chunks), the earlier part runs to the end of the file, which
/// is still the result of one pass, only slower. Each part reads, cuts and hashes on its own core.
extension Chunker {
    /// Reads `buffer.count` bytes at `offset` into `buffer`; returns how many (fewer only at the end).
    public typealias Reader = @Sendable (_ offset: Int, _ buffer: UnsafeMutableRawBufferPointer) throws -> Int

    /// The chunks of one pass over the whole input from the passes over its parts (each as
    /// offset and chunk, in order, part `k` starting where part `k - 1`'s range began): each
    /// part's chunks up to the first offset where the next part's chunks start too.
    public static func splice(_ parts: [[(Int, ChunkRef)]]) -> [ChunkRef] {
        var out: [ChunkRef] = []
        var next = 0  // the offset the next chunk must start at
        for part in parts {
            for (offset, ref) in part where offset >= next {
                guard offset == next else { break }
                out.append(ref)
                next += ref.size
            }
        }
        return out
    }

    /// One pass from `start`: chunks with their offsets until the input ends or `stop(end)` says
    /// the chunk ending at `end` is the last one this pass needs.
    public func chunkPass(from start: Int, segment: Int, read: Reader, stop: (Int) -> Bool) throws -> [(Int, ChunkRef)] {
        var out: [(Int, ChunkRef)] = []
        var carry: [UInt8] = []  // the uncut tail of the previous segment (< maxSize bytes)
        var position = start  // file offset of the segment's first byte
        var eof = false
        while true {
            let fresh = carry.count
            let segmentBytes = try [UInt8](unsafeUninitializedCapacity: fresh + segment) { buf, initialized in
                _ = buf.initialize(from: carry)
                var filled = fresh
                while filled < buf.count {
                    let got = try read(position + filled, UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buf)[filled...]))
                    if got <= 0 { eof = true; break }
                    filled += got
                }
                initialized = filled
            }
            let end = segmentBytes.count
            var cut = 0
            var stopped = false
            segmentBytes.withUnsafeBytes { raw in
                while cut < end && (eof || end - cut >= maxSize) {
                    let len = nextCut(in: UnsafeRawBufferPointer(rebasing: raw[cut..<end]))
                    out.append((position + cut, ChunkRef(hash: naming.name(UnsafeRawBufferPointer(rebasing: raw[cut..<cut + len])), size: len)))
                    cut += len
                    if stop(position + cut) { stopped = true; return }
                }
            }
            if stopped || (eof && cut == end) { return out }
            carry = Array(segmentBytes[cut..<end])
            position += cut
        }
    }
}
