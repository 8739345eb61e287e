import Foundation
import UbiqCore

/// A chunk store whose chunks are sealed at rest (``ChunkSeal``) with the server's key
/// (``ServerKeyRing``): what the folder, the bucket or a backup of either holds reveals no
/// content without the key. Wraps the folder or S3 store; chunks stored before sealing are
/// still read (and must hash right). Content addressing is unchanged: a chunk is still named by
/// the hash of its plaintext, so dedup, deltas and garbage collection work as before.
public struct SealedChunkStore: ChunkStore {
    public let inner: any ChunkStore
    public let ring: ServerKeyRing

    public init(_ inner: any ChunkStore, ring: ServerKeyRing) {
        self.inner = inner
        self.ring = ring
    }

    public func put(_ hash: ContentHash, _ bytes: [UInt8]) async throws {
        guard ContentHash.of(bytes) == hash else { throw StorageError(.hashMismatch, "the uploaded bytes do not hash to \(hash)") }
        try await putMany([(hash, bytes[...])], hashesChecked: true)
    }

    public func putMany(_ chunks: [(ContentHash, ArraySlice<UInt8>)], hashesChecked: Bool) async throws {
        let (pack, parts) = try await seal(chunks.map { $0.0 }, sizes: chunks.map { $0.1.count }, hashesChecked: hashesChecked) { i, body in
            try chunks[i].1.withUnsafeBytes { try body($0) }
        }
        try await inner.putMany(body: pack, chunks: parts, hashesChecked: true)
    }

    public func putMany(body: PackBytes, chunks: [(ContentHash, Range<Int>)], hashesChecked: Bool) async throws {
        let (pack, parts) = try await seal(chunks.map { $0.0 }, sizes: chunks.map { $0.1.count }, hashesChecked: hashesChecked) { i, each in
            try body.withBytes(chunks[i].1) { try each($0) }
        }
        try await inner.putMany(body: pack, chunks: parts, hashesChecked: true)
    }

    /// The chunks sealed one after another into a new pack (each checked against its name
    /// first unless `hashesChecked`), off the caller's thread.
    func seal(_ hashes: [ContentHash], sizes: [Int], hashesChecked: Bool,
              _ bytes: @escaping @Sendable (Int, (UnsafeRawBufferPointer) throws -> Void) throws -> Void) async throws -> (PackBytes, [(ContentHash, Range<Int>)]) {
        let ring = self.ring
        let total = sizes.reduce(0) { $0 + $1 + ChunkSeal.overhead }
        guard let pack = PackBytes(capacity: total) else { throw StorageError(.storageFailure, "out of memory for a chunk pack") }
        let parts = try await BlockingIO.run { () throws -> [(ContentHash, Range<Int>)] in
            var parts: [(ContentHash, Range<Int>)] = []
            parts.reserveCapacity(hashes.count)
            for (i, hash) in hashes.enumerated() {
                try bytes(i) { plain in
                    guard hashesChecked || ContentHash.of(buffer: plain) == hash else {
                        throw StorageError(.hashMismatch, "the uploaded bytes do not hash to \(hash)")
                    }
                    let start = pack.count
                    guard try ChunkSeal.seal(plain, as: hash, ring: ring, into: pack) else { throw StorageError(.storageFailure, "a sealed chunk does not fit its pack") }
                    parts.append((hash, start..<pack.count))
                }
            }
            return parts
        }
        return (pack, parts)
    }

    public func get(_ hash: ContentHash) async throws -> [UInt8]? {
        var out: [UInt8]?
        try await visitMany([hash], limit: .max, verify: true) { _, bytes in out = Array(bytes) }
        return out
    }

    public func has(_ hash: ContentHash) async throws -> Bool { try await inner.has(hash) }

    public func visitMany(_ hashes: [ContentHash], limit: Int, verify: Bool, _ visit: (Int, UnsafeRawBufferPointer) throws -> Void) async throws {
        let ring = self.ring
        var total = 0
        let (room, overflow) = limit.addingReportingOverflow(hashes.count.multipliedReportingOverflow(by: ChunkSeal.overhead).partialValue)
        try await inner.visitMany(hashes, limit: overflow ? .max : room, verify: false) { k, record in
            try ChunkSeal.open(record, as: hashes[k], ring: ring, verify: verify) { plain in
                total += plain.count
                guard total <= limit else { throw StorageError.tooLarge(limit) }
                try visit(k, plain)
            }
        }
    }

    /// Sizes are the chunks' own (a record's less its seal), as garbage collection counts them;
    /// `forget`, `compact` and `footprint` count the bytes kept.
    public func storedChunks(pageSize: Int, _ visit: ([StoredChunk]) async throws -> Void) async throws {
        try await inner.storedChunks(pageSize: pageSize) { page in
            try await visit(page.map { StoredChunk(hash: $0.hash, size: max(0, $0.size - ChunkSeal.overhead)) })
        }
    }

    public func rewriteRecords(_ transform: @escaping RecordTransform) async throws -> Int { try await inner.rewriteRecords(transform) }

    /// Seals again, with the current key, every record sealed with another key of the ring or
    /// stored before sealing (a rotation's, or a conversion's, background pass). A record that
    /// does not open is left as it is (and reported as corrupt when read). Returns how many
    /// records were sealed again.
    public func reseal() async throws -> Int {
        let ring = self.ring
        return try await inner.rewriteRecords { hash, record in
            guard ChunkSeal.keyID(of: record) != ring.currentID else { return nil }
            guard let pack = PackBytes(capacity: record.count + ChunkSeal.overhead) else { throw StorageError(.storageFailure, "out of memory") }
            do {
                try ChunkSeal.open(record, as: hash, ring: ring, verify: true) { plain in _ = try ChunkSeal.seal(plain, as: hash, ring: ring, into: pack) }
            } catch { return nil }
            return pack.withBytes { Array($0) }
        }
    }

    public func forget(_ hashes: [ContentHash]) async throws -> Int64 { try await inner.forget(hashes) }
    public func compact() async throws -> Compaction { try await inner.compact() }
    public func footprint() async throws -> Int64 { try await inner.footprint() }
}
