import Foundation
import UbiqCore

/// Chunks in an S3-compatible bucket (`--blobs s3://…`). A batch of chunks (`putMany`, or one
/// `put`) is one object `packs/<uuid>`, acknowledged by the store before its index rows (hash →
/// pack, offset, size; `PackIndex`) are committed, so nothing is acknowledged to a device that
/// the store has not acknowledged, and a crash leaves at most an object no row names (removed by
/// `compact` once it is an hour old). Chunks are read with ranged GETs — requests that lie
/// close together in one pack as one — and verified like the folder store's. The chunks of the
/// batches stored last are also kept in memory (`RecentChunks`).
///
/// Storing chunks that are stored already costs what storing them fresh does (an object written,
/// then removed), as in `FolderChunkStore`: otherwise the answer's time would tell an account
/// whether anyone else holds a given file.
public struct S3ChunkStore: ChunkStore {
    public let s3: S3Client
    let index: PackIndex
    let recent: RecentChunks
    /// The clock that dates objects against `orphanAge`.
    let now: @Sendable () -> Date
    /// Objects no index row names are removed once this old (an upload writes its object, then
    /// its rows, within seconds).
    static let orphanAge: TimeInterval = 3600

    /// The store on `client`'s bucket (created if missing), with its index in the SQLite file
    /// `indexPath`.
    public init(client: S3Client, indexPath: String, recentBytes: Int = FolderChunkStore.defaultRecentBytes,
                now: @escaping @Sendable () -> Date = { Date() }) async throws {
        try await self.init(client: client, index: try PackIndex(path: indexPath), recentBytes: recentBytes, now: now)
    }

    /// The store on `client`'s bucket (created if missing), with its index in the tables of
    /// `database` (the PostgreSQL metadata database several servers share).
    public init(client: S3Client, indexIn database: any SQLDatabase, recentBytes: Int = FolderChunkStore.defaultRecentBytes,
                now: @escaping @Sendable () -> Date = { Date() }) async throws {
        try await self.init(client: client, index: PackIndex(database: database), recentBytes: recentBytes, now: now)
    }

    init(client: S3Client, index: PackIndex, recentBytes: Int, now: @escaping @Sendable () -> Date) async throws {
        s3 = client
        self.now = now
        self.index = index
        recent = RecentChunks(budget: recentBytes)
        try await client.ensureBucket()
    }

    static func key(_ pack: String) -> String { "packs/\(pack)" }

    public func put(_ hash: ContentHash, _ bytes: [UInt8]) async throws {
        guard ContentHash.of(bytes) == hash else { throw StorageError(.hashMismatch, "the uploaded bytes do not hash to \(hash)") }
        try await putMany([(hash, bytes[...])], hashesChecked: true)
    }

    public func putMany(_ chunks: [(ContentHash, ArraySlice<UInt8>)], hashesChecked: Bool) async throws {
        var fresh: [Int] = [], stored: [Int] = []
        var seen = Set<ContentHash>()
        let placed = try await index.placesForUpload(chunks.map(\.0))
        for (i, (hash, bytes)) in chunks.enumerated() where seen.insert(hash).inserted {
            guard hashesChecked || ContentHash.of(bytes) == hash else { throw StorageError(.hashMismatch, "the uploaded bytes do not hash to \(hash)") }
            if placed[hash] == nil { fresh.append(i) } else { stored.append(i) }
        }
        if !stored.isEmpty {
            try await writeStandIn(stored.reduce(into: [UInt8]()) { $0 += chunks[$1].1 })
        }
        guard !fresh.isEmpty else { return }
        var pack: [UInt8] = []
        pack.reserveCapacity(fresh.reduce(0) { $0 + chunks[$1].1.count })
        var parts: [(ContentHash, Range<Int>)] = []
        for i in fresh {
            let start = pack.count
            pack += chunks[i].1
            parts.append((chunks[i].0, start..<pack.count))
        }
        let name = UUID().uuidString.lowercased()
        try await s3.put(Self.key(name), pack)
        try await index.record(pack: name, size: pack.count, parts)
        if let kept = PackBytes(capacity: pack.count) {
            _ = pack.withUnsafeBytes { kept.append($0) }
            recent.add(kept, chunks: parts)
        }
    }

    public func putMany(body: PackBytes, chunks: [(ContentHash, Range<Int>)], hashesChecked: Bool) async throws {
        try await putMany(chunks.map { h, r in (h, body.withBytes(r) { ArraySlice($0) }) }, hashesChecked: hashesChecked)
    }

    /// Writes `bytes` as an object no row names, then removes it: the cost of storing chunks
    /// that were stored already.
    func writeStandIn(_ bytes: [UInt8]) async throws {
        let key = Self.key(UUID().uuidString.lowercased())
        try await s3.put(key, bytes)
        try? await s3.delete(key)  // if this fails, `compact` removes it later
    }

    public func get(_ hash: ContentHash) async throws -> [UInt8]? {
        var out: [UInt8]?
        try await visitMany([hash], limit: Int.max, verify: true) { _, bytes in out = Array(bytes) }
        return out
    }

    public func has(_ hash: ContentHash) async throws -> Bool { try await index.places([hash])[hash] != nil }

    /// Chunks stored moments ago come from memory; the others with one ranged GET per run of
    /// requests that lie close together in one pack. A pack that is gone meanwhile (compaction
    /// moved what was left of it) is looked up again.
    public func visitMany(_ hashes: [ContentHash], limit: Int, verify: Bool, _ visit: (Int, UnsafeRawBufferPointer) throws -> Void) async throws {
        let remembered = recent.lookup(hashes)
        var places = try await index.places(hashes.indices.filter { remembered[$0] == nil }.map { hashes[$0] })
        var total = 0
        var lookedAgain = 0
        var i = 0
        func check(_ k: Int, _ bytes: UnsafeRawBufferPointer) throws {
            if verify && ContentHash.of(buffer: bytes) != hashes[k] { throw StorageError(.chunkDamaged, "stored chunk \(hashes[k]) is damaged on the server") }
        }
        while i < hashes.count {
            if let bytes = remembered[i] {
                try bytes.withUnsafeBytes { raw in
                    total += raw.count
                    guard total <= limit else { throw StorageError.tooLarge(limit) }
                    try check(i, raw)
                    try visit(i, raw)
                }
                i += 1
                continue
            }
            guard let p = places[hashes[i]] else { i += 1; continue }  // not stored
            var spanEnd = p.offset + p.size
            var j = i + 1
            while j < hashes.count, remembered[j] == nil, let q = places[hashes[j]], q.pack == p.pack, q.offset >= p.offset,
                  q.offset <= spanEnd + FolderChunkStore.spanGap, max(spanEnd, q.offset + q.size) - p.offset <= FolderChunkStore.spanLimit {
                spanEnd = max(spanEnd, q.offset + q.size)
                j += 1
            }
            let need = (i..<j).reduce(0) { $0 + places[hashes[$1]]!.size }
            guard total + need <= limit else { throw StorageError.tooLarge(limit) }
            guard let span = try await s3.get(Self.key(p.pack), range: p.offset..<spanEnd, limit: spanEnd - p.offset), span.count == spanEnd - p.offset else {
                guard lookedAgain < 3 else { throw StorageError(.storageFailure, "stored chunk \(hashes[i]) is missing its pack") }
                lookedAgain += 1
                let rest = hashes[i...].indices.filter { remembered[$0] == nil }.map { hashes[$0] }
                let found = try await index.places(rest)
                for h in rest { places[h] = found[h] }
                continue
            }
            try span.withUnsafeBytes { raw in
                for k in i..<j {
                    let q = places[hashes[k]]!
                    let bytes = UnsafeRawBufferPointer(rebasing: raw[(q.offset - p.offset)..<(q.offset - p.offset + q.size)])
                    total += q.size
                    try check(k, bytes)
                    try visit(k, bytes)
                }
            }
            i = j
        }
    }

    // Garbage collection.

    public func storedChunks(pageSize: Int, _ visit: ([StoredChunk]) async throws -> Void) async throws {
        try await index.eachPage(pageSize, visit)
    }

    public func forget(_ hashes: [ContentHash]) async throws -> Int64 {
        guard !hashes.isEmpty else { return 0 }
        return try await index.forget(hashes)
    }

    /// Deletes packs nothing is left in, rewrites those less than half used (new object stored,
    /// rows moved, old object removed last), and removes objects no row names that are over an
    /// hour old (a crash's, a stand-in whose removal failed).
    public func compact() async throws -> Compaction {
        var result = Compaction()
        for (pack, live, count) in try await index.packsWithGarbage() {
            let size = Int64(try await index.size(of: pack) ?? 0)
            if count == 0 {
                try await s3.delete(Self.key(pack))
                try await index.dropNote(pack)
                result.deleted += 1
                result.bytesFreed += size
            } else if live * 2 < size {
                let newSize = try await rewrite(pack) ?? Int(size)
                result.rewritten += 1
                result.bytesFreed += max(0, size - Int64(newSize))
            }
        }
        let named = try await index.packNames()
        let cutoff = now().addingTimeInterval(-Self.orphanAge)
        for o in try await s3.list(prefix: "packs/") {
            let name = String(o.key.dropFirst("packs/".count))
            guard !named.contains(name), let modified = o.modified, modified < cutoff else { continue }
            try await s3.delete(o.key)
            result.deleted += 1
            result.bytesFreed += o.size
        }
        return result
    }

    /// Copies the chunks still in `pack` into a new object, moves their rows to it, removes the
    /// old one; returns the new size. With `transform`, each record is handed to it and what it
    /// returns takes the record's place; nil (nothing written) when it changed none.
    func rewrite(_ pack: String, transform: RecordTransform? = nil) async throws -> Int? {
        let rows = try await index.rows(of: pack)
        guard let whole = try await s3.get(Self.key(pack), limit: FolderChunkStore.spanLimit * 2) else {
            throw StorageError(.storageFailure, "pack \(pack) is missing from the object store")
        }
        var fresh: [UInt8] = []
        var moved: [(hash: String, offset: Int, size: Int)] = []
        var changed = 0
        for r in rows {
            guard r.offset + r.size <= whole.count else { throw StorageError(.storageFailure, "pack \(pack) is shorter than its index says") }
            let start = fresh.count
            let record = whole[r.offset..<r.offset + r.size]
            if let transform, let hash = try? ContentHash(validating: r.hash), let new = try record.withUnsafeBytes({ try transform(hash, $0) }) {
                fresh += new
                changed += 1
            } else {
                fresh += record  // as they are: a corrupt chunk stays one
            }
            moved.append((r.hash, start, fresh.count - start))
        }
        if transform != nil && changed == 0 { return nil }
        let name = UUID().uuidString.lowercased()
        try await s3.put(Self.key(name), fresh)
        try await index.move(moved, from: pack, to: name, size: fresh.count)
        try await s3.delete(Self.key(pack))
        return fresh.count
    }

    public func rewriteRecords(_ transform: @escaping RecordTransform) async throws -> Int {
        var changed = 0
        for pack in try await index.packNames().sorted() {
            let before = try await index.rows(of: pack).count
            if try await rewrite(pack, transform: transform) != nil { changed += before }
        }
        return changed
    }

    public func footprint() async throws -> Int64 {
        try await s3.list(prefix: "packs/").reduce(0) { $0 + $1.size }
    }
}
