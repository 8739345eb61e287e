
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

    /// The most chunk references a delta may expand to unless told otherwise (a manifest's limit).
    public static let defaultLimit = 1_000_000

    /// How many chunk references the delta expands to, counted from its pieces alone (no base
    /// needed, nothing built); nil when a copy's count is not positive or the sum does not fit.
    public var expandedCount: Int? {
        var total = 0
        for p in pieces {
            let n: Int
            switch p {
            case .copy(_, let count): guard count > 0 else { return nil }; n = count
            case .chunk: n = 1
            }
            let (sum, overflow) = total.addingReportingOverflow(n)
            guard !overflow else { return nil }
            total = sum
        }
        return total
    }

    /// Throws `invalid_request` unless the delta expands to at most `limit` references — checked
    /// from the pieces alone, before any base is loaded or anything is built (#45 row 1: 23
    /// pieces of `copy [0, 65536]` in 956 bytes built 1.5 M references).
    public func checkExpansion(limit: Int = ManifestDelta.defaultLimit) throws {
        guard let n = expandedCount else { throw CoreError(.invalidRequest, "manifest delta has a copy of no chunks, or too many") }
        guard n <= limit else {
            throw CoreError(.invalidRequest, "manifest delta expands to \(n) chunk references, past the \(limit) allowed")
        }
    }

    /// Rebuilds the manifest from the same base; throws `invalid_request` if it does not fit.
    ///
    /// Nothing is built before everything is checked: the expanded count against `limit` (from the
    /// pieces alone), every copy against the base, then the size and the digest, streamed over the
    /// pieces. Only a delta that is right is materialised, in one allocation of its exact size.
    public func apply(baseChunks: [ChunkRef], limit: Int = ManifestDelta.defaultLimit) throws -> Manifest {
        try checkExpansion(limit: limit)
        for case .copy(let from, let count) in pieces {
            guard from >= 0, count > 0, from <= baseChunks.count - count else { throw CoreError(.invalidRequest, "manifest delta copies outside its base") }
        }
        guard Manifest.checkedSize(of: expanded(baseChunks)) == size, Manifest.contentHash(of: expanded(baseChunks)) == digest else {
            throw CoreError(.invalidRequest, "manifest delta does not apply to this base")
        }
        var out: [ChunkRef] = []
        out.reserveCapacity(expandedCount ?? 0)
        out.append(contentsOf: expanded(baseChunks))
        return Manifest(chunks: out, size: size, hash: hash)
    }

    /// The expanded chunk list as a lazy sequence over the pieces (copies checked by the caller).
    func expanded(_ baseChunks: [ChunkRef]) -> ExpandedChunks { ExpandedChunks(pieces: pieces, base: baseChunks, count: expandedCount ?? 0) }
}

/// A delta's chunk list read piece by piece without building it.
struct ExpandedChunks: Collection {
    let pieces: [ManifestPiece]
    let base: [ChunkRef]
    let count: Int

    struct Index: Comparable {
        var piece: Int, offset: Int, position: Int
        static func < (a: Index, b: Index) -> Bool { a.position < b.position }
        static func == (a: Index, b: Index) -> Bool { a.position == b.position }
    }

    var startIndex: Index { Index(piece: 0, offset: 0, position: 0) }
    var endIndex: Index { Index(piece: pieces.count, offset: 0, position: count) }

    subscript(i: Index) -> ChunkRef {
        switch pieces[i.piece] {
        case .copy(let from, _): return base[from + i.offset]
        case .chunk(let c): return c
        }
    }

    func index(after i: Index) -> Index {
        let length: Int
        switch pieces[i.piece] {
        case .copy(_, let n): length = n
        case .chunk: length = 1
        }
        return i.offset + 1 < length ? Index(piece: i.piece, offset: i.offset + 1, position: i.position + 1)
                                     : Index(piece: i.piece + 1, offset: 0, position: i.position + 1)
    }
}
