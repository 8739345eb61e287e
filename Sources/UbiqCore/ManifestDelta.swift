
/// One piece of a manifest expressed against a base manifest: a run of the base's chunks, or a new chunk.
public enum ManifestPiece: Hashable, Sendable, Codable {
    case copy(from: Int, count: Int)
    case chunk(ChunkRef)

    enum CodingKeys: String, CodingKey { case copy, hash, size }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if let run = try c.decodeIfPresent([Int].self, forKey: .copy) {
            guard run.count == 2 else { throw DecodingError.dataCorruptedError(forKey: .copy, in: c, debugDescription: "copy is [from, count]") }
            self = .copy(from: run[0], count: run[1])
        } else {
            let ref = ChunkRef(hash: try c.decode(ContentHash.self, forKey: .hash), size: try c.decode(Int.self, forKey: .size))
            guard ref.hasPlausibleSize else {
                throw DecodingError.dataCorruptedError(forKey: .size, in: c, debugDescription: "a chunk's size is 1 to \(ChunkRef.maxSize) bytes")
            }
            self = .chunk(ref)
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .copy(let from, let count): try c.encode([from, count], forKey: .copy)
        case .chunk(let ref): try c.encode(ref.hash, forKey: .hash); try c.encode(ref.size, forKey: .size)
        }
    }
}

/// A manifest as the difference from a base version's manifest: after a small edit only the
/// changed chunks are named, so metadata costs bytes in proportion to the change, not the file.
/// `digest` covers the resulting chunk list so both sides can tell the delta applied to the same base.
public struct ManifestDelta: Hashable, Sendable, Codable {
    public var base: VersionID
    public var pieces: [ManifestPiece]
    public var size: Int
    public var hash: ContentHash
    public var digest: ContentHash

    public init(base: VersionID, pieces: [ManifestPiece], size: Int, hash: ContentHash, digest: ContentHash) {
        self.base = base; self.pieces = pieces; self.size = size; self.hash = hash; self.digest = digest
    }

    /// The digest of a chunk list: SHA-256 over each chunk's hash and size (the same as a
    /// manifest's content hash).
    public static func digest(_ chunks: [ChunkRef]) -> ContentHash { Manifest.contentHash(of: chunks) }

    /// Describes `new` against `baseChunks`, reusing runs of base chunks wherever they match.
    public static func make(base: VersionID, baseChunks: [ChunkRef], new: Manifest) -> ManifestDelta {
        var firstIndex: [ChunkRef: Int] = [:]
        for (i, c) in baseChunks.enumerated() where firstIndex[c] == nil { firstIndex[c] = i }
        var pieces: [ManifestPiece] = []
        var run: (from: Int, count: Int)?
        for c in new.chunks {
            if let r = run, r.from + r.count < baseChunks.count, baseChunks[r.from + r.count] == c {
                run = (r.from, r.count + 1)
                continue
            }
            if let r = run { pieces.append(.copy(from: r.from, count: r.count)); run = nil }
            if let k = firstIndex[c] { run = (k, 1) } else { pieces.append(.chunk(c)) }
        }
        if let r = run { pieces.append(.copy(from: r.from, count: r.count)) }
        return ManifestDelta(base: base, pieces: pieces, size: new.size, hash: new.hash, digest: digest(new.chunks))
    }

    /// Rebuilds the manifest from the same base; throws `invalid_request` if it does not fit.
    public func apply(baseChunks: [ChunkRef]) throws -> Manifest {
        var out: [ChunkRef] = []
        for p in pieces {
            switch p {
            case .copy(let from, let count):
                guard from >= 0, count > 0, from <= baseChunks.count - count else { throw CoreError(.invalidRequest, "manifest delta copies outside its base") }
                out += baseChunks[from..<(from + count)]
            case .chunk(let c): out.append(c)
            }
            guard out.count <= 10_000_000 else { throw CoreError(.invalidRequest, "manifest delta too large") }
        }
        guard Manifest.checkedSize(of: out) == size, Self.digest(out) == digest else {
            throw CoreError(.invalidRequest, "manifest delta does not apply to this base")
        }
        return Manifest(chunks: out, size: size, hash: hash)
    }
}
