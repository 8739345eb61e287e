/// A FastCDC content-defined chunker (gear rolling hash with normalised chunking).
///
/// Boundaries depend only on the bytes near them, so inserting or deleting bytes changes
/// only the chunks around the edit. Sizes: at least `minSize` (except a final short chunk),
/// at most `maxSize`; below `avgSize` a harder mask is used and above it an easier one
/// (normalisation level 2), which pulls chunk sizes towards the average.
public struct Chunker: Sendable {
    public let minSize: Int
    public let avgSize: Int
    public let maxSize: Int
    let maskSmall: UInt64
    let maskLarge: UInt64
    /// How the chunks it cuts are named (`ChunkNaming.plain` unless the account is encrypted).
    public var naming: ChunkNaming = .plain

    /// This chunker naming its chunks with `naming`.
    public func named(_ naming: ChunkNaming) -> Chunker {
        var c = self
        c.naming = naming
        return c
    }

    /// Default sizes: min 8 KiB, average 32 KiB, max 128 KiB. Measured against 16/64/256 KiB (the
    /// starting point) with `ubiq-bench sync`: a 1-byte edit in a 64 MiB file cost 196 KiB on the
    /// wire for both legs with 64 KiB chunks and 36–69 KiB with 32 KiB, at the same chunking speed
    /// and (with parallel chunk fetches) the same 1 MiB latency.
    public static let standard = Chunker(minSize: 8 << 10, avgSize: 32 << 10, maxSize: 128 << 10)

    /// `avgSize` must be a power of two; `minSize < avgSize < maxSize`.
    public init(minSize: Int, avgSize: Int, maxSize: Int) {
        precondition(minSize > 0 && minSize < avgSize && avgSize < maxSize, "chunk sizes must satisfy 0 < min < avg < max")
        precondition(avgSize & (avgSize - 1) == 0, "average chunk size must be a power of two")
        self.minSize = minSize
        self.avgSize = avgSize
        self.maxSize = maxSize
        let bits = avgSize.trailingZeroBitCount
        maskSmall = Self.spreadMask(bits: bits + 2)
        maskLarge = Self.spreadMask(bits: max(1, bits - 2))
    }

    /// A mask with `bits` one-bits spread over the high 48 bits of the hash, so every
    /// tested bit depends on a long window of input (bit p of a gear hash covers p+1 bytes).
    static func spreadMask(bits: Int) -> UInt64 {
        var mask: UInt64 = 0
        let span = 48
        for i in 0..<bits { mask |= 1 << UInt64(63 - (i * span) / bits) }
        return mask
    }

    /// Length of the next chunk at the start of `buffer`. `isFinal` says no more bytes follow;
    /// otherwise the buffer must hold at least `maxSize` bytes (or the caller accepts a cut at its end).
    public func nextCut(in buffer: UnsafeRawBufferPointer) -> Int {
        let n = buffer.count
        if n <= minSize { return n }
        let limit = min(n, maxSize)
        let normal = min(limit, avgSize)
        return Gear.table.withUnsafeBufferPointer { gear -> Int in
            let bytes = buffer.bindMemory(to: UInt8.self)
            var hash: UInt64 = 0
            var i = minSize
            while i < normal {
                hash = (hash << 1) &+ gear[Int(bytes[i])]
                if hash & maskSmall == 0 { return i + 1 }
                i += 1
            }
            while i < limit {
                hash = (hash << 1) &+ gear[Int(bytes[i])]
                if hash & maskLarge == 0 { return i + 1 }
                i += 1
            }
            return limit
        }
    }

    /// Every chunk of an in-memory input, as byte ranges that tile it in order.
    public func chunkRanges(of bytes: UnsafeRawBufferPointer) -> [Range<Int>] {
        var out: [Range<Int>] = []
        out.reserveCapacity(bytes.count / avgSize + 1)
        var start = 0
        while start < bytes.count {
            let len = nextCut(in: UnsafeRawBufferPointer(rebasing: bytes[start...]))
            out.append(start..<(start + len))
            start += len
        }
        return out
    }

    /// Every chunk of an array's contents.
    public func chunkRanges(of bytes: [UInt8]) -> [Range<Int>] {
        bytes.withUnsafeBytes { chunkRanges(of: $0) }
    }
}

/// A chunk of a file: its hash and size, in file order within a manifest.
public struct ChunkRef: Hashable, Sendable, Codable {
    public let hash: ContentHash
    public let size: Int
    public init(hash: ContentHash, size: Int) {
        self.hash = hash
        self.size = size
    }

    /// The largest chunk any manifest may name (the standard chunker cuts at 128 KiB); a size
    /// outside `1...maxSize` read from the network or the disk is refused where it is read.
    public static let maxSize = 1 << 20

    /// True when `size` is in `1...maxSize`.
    public var hasPlausibleSize: Bool { size > 0 && size <= Self.maxSize }

    enum CodingKeys: String, CodingKey { case hash, size }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(hash: try c.decode(ContentHash.self, forKey: .hash), size: try c.decode(Int.self, forKey: .size))
        guard hasPlausibleSize else {
            throw DecodingError.dataCorruptedError(forKey: .size, in: c, debugDescription: "a chunk's size is 1 to \(Self.maxSize) bytes")
        }
    }
}

/// A file's content described as chunks, plus its content hash (derived from the chunk list:
/// `Manifest+Hash.swift`).
public struct Manifest: Hashable, Sendable, Codable {  // wire form: Manifest+Coding.swift
    public let chunks: [ChunkRef]
    public let size: Int
    public let hash: ContentHash
    public init(chunks: [ChunkRef], size: Int, hash: ContentHash) {
        self.chunks = chunks
        self.size = size
        self.hash = hash
    }

    /// Chunks and hashes an in-memory input.
    public static func of(_ bytes: [UInt8], chunker: Chunker = .standard) -> Manifest {
        bytes.withUnsafeBytes { raw in
            let ranges = chunker.chunkRanges(of: raw)
            return Manifest(chunks: ranges.map { ChunkRef(hash: chunker.naming.name(UnsafeRawBufferPointer(rebasing: raw[$0])), size: $0.count) })
        }
    }
}

/// The gear table: 256 pseudo-random 64-bit values from a fixed SplitMix64 seed (deterministic,
/// so every device cuts the same content at the same places).
enum Gear {
    static let table: [UInt64] = {
        var state: UInt64 = 0x5542_4951_5549_5459  // "UBIQUITY"
        return (0..<256).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }()
}
