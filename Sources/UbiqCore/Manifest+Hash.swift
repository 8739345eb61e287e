/// A file's content hash, derived from its chunk list.
///
/// A version's `hash` is not SHA-256 of the whole file but SHA-256 over its chunks' hashes and
/// sizes, in order (the scheme of Dropbox's `content_hash`): since every chunk is named by the
/// SHA-256 of its bytes and the chunk boundaries depend only on the content, it still names the
/// content exactly, and equal files have equal hashes on every device. What it saves is a second
/// SHA-256 pass over every byte: a device hashes each chunk once (on several cores) and gets the
/// file's hash from the list; a downloading device verifies each chunk as it arrives and the list
/// against the hash; the server checks a commit's hash against its chunk list at no cost.
///
/// The chunker's sizes and gear table (`Chunker.standard`) are therefore part of a content's
/// identity: a client cutting with other parameters gets other hashes for the same bytes.
extension Manifest {
    /// SHA-256 over each chunk's hash (64 lower-case hex characters) and size (8 bytes,
    /// little-endian), in order. The empty file's chunk list is empty.
    public static func contentHash<C: Collection<ChunkRef>>(of chunks: C) -> ContentHash {
        var h = StreamingHash()
        var record = [UInt8](repeating: 0, count: 72)
        for c in chunks {
            record.withUnsafeMutableBytes { out in
                c.hash.withHex { out.copyMemory(from: $0) }
                out.storeBytes(of: UInt64(truncatingIfNeeded: c.size).littleEndian, toByteOffset: 64, as: UInt64.self)
            }
            record.withUnsafeBytes { h.update($0) }
        }
        return h.finalize()
    }

    /// A manifest for `chunks`, its size and hash derived from them.
    public init(chunks: [ChunkRef]) {
        self.init(chunks: chunks, size: chunks.reduce(0) { $0 + $1.size }, hash: Self.contentHash(of: chunks))
    }

    /// True when `size` and `hash` are those of the chunk list (a manifest from the network or
    /// the disk is checked with this before it is trusted).
    public var isConsistent: Bool {
        Self.checkedSize(of: chunks) == size && hash == Self.contentHash(of: chunks)
    }

    /// The sum of the chunks' sizes; nil when a chunk's size is outside `1...ChunkRef.maxSize`
    /// or the sum does not fit (sizes read from the network never trap).
    public static func checkedSize<C: Collection<ChunkRef>>(of chunks: C) -> Int? {
        var total = 0
        for c in chunks {
            guard c.hasPlausibleSize else { return nil }
            let (sum, overflow) = total.addingReportingOverflow(c.size)
            guard !overflow else { return nil }
            total = sum
        }
        return total
    }
}
