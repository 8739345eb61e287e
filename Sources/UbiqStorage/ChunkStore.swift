import CFileSupport
import Foundation
import GRDB
import Synchronization
import UbiqCore

/// Content-addressed chunk storage. Every implementation verifies a chunk's hash on write and on
/// read (unless the caller says it has checked, or will have it checked end to end).
public protocol ChunkStore: Sendable {
    /// Stores `bytes` under `hash`; `hash_mismatch` if they do not hash to it. Idempotent.
    func put(_ hash: ContentHash, _ bytes: [UInt8]) async throws
    /// The chunk's bytes, verified; nil if absent; `storage_failure` if the stored bytes are corrupt.
    func get(_ hash: ContentHash) async throws -> [UInt8]?
    /// True if the chunk is stored.
    func has(_ hash: ContentHash) async throws -> Bool
    /// Stores several chunks (verified like `put` unless the caller has just hashed them
    /// itself: `hashesChecked`); durable when it returns. Slices, so a request body's chunks
    /// need not be copied out of it.
    func putMany(_ chunks: [(ContentHash, ArraySlice<UInt8>)], hashesChecked: Bool) async throws
    /// Like `putMany`, for chunks lying at `chunks`' ranges in a received `body` (which the
    /// store may keep as it is rather than copy the chunks out).
    func putMany(body: PackBytes, chunks: [(ContentHash, Range<Int>)], hashesChecked: Bool) async throws
    /// Hands each stored chunk of `hashes` to `visit` in order, with its index (absent ones are
    /// skipped), verified like `get` if `verify` (a caller that hands them to a client which
    /// checks every byte end to end may skip it); throws `payload_too_large` before reading on
    /// once they add up to more than `limit` bytes. The bytes are only valid during the call.
    func visitMany(_ hashes: [ContentHash], limit: Int, verify: Bool, _ visit: (Int, UnsafeRawBufferPointer) throws -> Void) async throws

    // Garbage collection (`GarbageCollector` in UbiqServer decides what is garbage).

    /// Every stored chunk, in pages of at most `pageSize` in hash order, handed to `visit` one
    /// page at a time (a chunk stored meanwhile may or may not be seen).
    func storedChunks(pageSize: Int, _ visit: ([StoredChunk]) async throws -> Void) async throws
    /// Forgets `hashes`: reads no longer find them and a later `put` stores them afresh. Returns
    /// the bytes they took; the space itself is given back by `compact`.
    func forget(_ hashes: [ContentHash]) async throws -> Int64
    /// Gives back the space of forgotten chunks: containers (packs) with nothing left in them
    /// are deleted, those mostly forgotten are rewritten with only what is left. Chunks being
    /// read meanwhile are still found.
    func compact() async throws -> Compaction
    /// The bytes of chunk data the store holds now (packs, loose chunks, objects; not indexes).
    func footprint() async throws -> Int64
    /// Hands every stored record (as kept: sealed or not) to `transform`; where it returns
    /// bytes, they replace the record — each container (pack, object, loose file) holding one
    /// is rewritten: the new one flushed before the index moves to it, the old one removed
    /// after, so a read meanwhile finds one or the other. Returns how many records changed.
    /// Runs one at a time with garbage collection (the caller's turn).
    func rewriteRecords(_ transform: @escaping @Sendable (ContentHash, UnsafeRawBufferPointer) throws -> [UInt8]?) async throws -> Int
}

/// A record's replacement (see `ChunkStore.rewriteRecords`).
public typealias RecordTransform = @Sendable (ContentHash, UnsafeRawBufferPointer) throws -> [UInt8]?

/// A stored chunk as garbage collection sees it.
public struct StoredChunk: Sendable, Hashable {
    public let hash: ContentHash
    public let size: Int
    public init(hash: ContentHash, size: Int) { self.hash = hash; self.size = size }
}

/// What `compact` did.
public struct Compaction: Sendable, Equatable, Codable {
    /// Packs (or objects) deleted because nothing in them was wanted.
    public var deleted = 0
    /// Packs rewritten with only the chunks still wanted.
    public var rewritten = 0
    /// Bytes given back.
    public var bytesFreed: Int64 = 0
    public init() {}
}

extension ChunkStore {
    public func rewriteRecords(_ transform: @escaping RecordTransform) async throws -> Int {
        throw StorageError(.invalidRequest, "this chunk store cannot rewrite its records")
    }

    /// Stores several chunks, each verified like `put`; durable when it returns.
    public func putMany(_ chunks: [(ContentHash, [UInt8])]) async throws {
        try await putMany(chunks.map { ($0.0, $0.1[...]) }, hashesChecked: false)
    }

    public func putMany(_ chunks: [(ContentHash, ArraySlice<UInt8>)], hashesChecked: Bool) async throws {
        for (h, b) in chunks { try await put(h, Array(b)) }
    }

    public func putMany(body: PackBytes, chunks: [(ContentHash, Range<Int>)], hashesChecked: Bool) async throws {
        try await putMany(chunks.map { h, r in (h, body.withBytes(r) { ArraySlice(Array($0)) }) }, hashesChecked: hashesChecked)
    }

    /// Several chunks in order (nil for an absent one), verified like `get` if `verify`; throws
    /// `payload_too_large` as soon as they add up to more than `limit` bytes.
    public func getMany(_ hashes: [ContentHash], limit: Int, verify: Bool = true) async throws -> [[UInt8]?] {
        var out = [[UInt8]?](repeating: nil, count: hashes.count)
        try await visitMany(hashes, limit: limit, verify: verify) { i, bytes in out[i] = Array(bytes) }
        return out
    }

    public func visitMany(_ hashes: [ContentHash], limit: Int, verify: Bool, _ visit: (Int, UnsafeRawBufferPointer) throws -> Void) async throws {
        var total = 0
        for (i, h) in hashes.enumerated() {
            guard let bytes = try await get(h) else { continue }
            total += bytes.count
            guard total <= limit else { throw StorageError.tooLarge(limit) }
            try bytes.withUnsafeBytes { try visit(i, $0) }
        }
    }
}

extension StorageError {
    static func tooLarge(_ limit: Int) -> StorageError {
        StorageError(.payloadTooLarge, "the chunks asked for add up to more than \(limit) bytes")
    }
}

/// Chunks in a folder. A batch of chunks (`putMany`) is one **pack file**
/// `<root>/packs/<uuid>.pack` (the new chunks one after another, or — for a received batch that
/// is nearly all new — the request body as it came, framing included), written and fsynced before its
/// index rows (hash → pack, offset, size in `<root>/packs.sqlite`) are committed, so a crash
/// leaves at most an unreferenced pack, never a chunk that reads wrong. A single `put` is a loose
/// file `<root>/ab/cd/abcd…` (two levels of fan-out), written to a temporary file, fsynced and
/// renamed into place. Reads look in the pack index, then for a loose file, and verify the hash
/// unless told the caller's client checks it. Packs turn the thousands of file creations of many
/// small files into one; they are written and read with `O_DIRECT` where possible.
///
/// Storing a chunk that is stored already (another account has the same content) costs what
/// storing it fresh does: its bytes are written and flushed as a pack would be, then dropped.
/// Skipping the write answered such uploads in about half the time, which told any account
/// whether someone else held a given file.
public struct FolderChunkStore: ChunkStore {
    public let root: URL
    let index: PackIndex
    let recent: RecentChunks
    let writes = DurableWrites()

    /// Files written and flushed so far (packs, loose chunks, and the stand-ins for chunks that
    /// were stored already).
    public var durableWrites: Int { writes.count.load(ordering: .relaxed) }

    /// Opens (or creates) the store in `root`; the chunks of the batches stored last, up to
    /// `recentBytes`, are also kept in memory for the downloads that follow an upload closely.
    public init(root: URL, recentBytes: Int = Self.defaultRecentBytes) throws {
        self.root = root
        self.recent = RecentChunks(budget: recentBytes)
        do {
            try FileManager.default.createDirectory(at: root.appendingPathComponent("tmp"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: root.appendingPathComponent("packs"), withIntermediateDirectories: true)
        } catch {
            throw StorageError(.storageFailure, "cannot create the chunk folder \(root.path): \(error.localizedDescription)")
        }
        index = try PackIndex(path: root.appendingPathComponent("packs.sqlite").path)
    }

    /// Memory for recently stored chunks: a few batches (each at most 16 MiB).
    public static let defaultRecentBytes = 64 << 20

    func packURL(_ name: String) -> URL { root.appendingPathComponent("packs", isDirectory: true).appendingPathComponent("\(name).pack", isDirectory: false) }

    /// Where a packed chunk lies, if it is packed.
    func packed(_ hash: ContentHash) throws -> PackPlace? { try index.placesNow([hash])[hash] }

    /// Where each packed chunk of `hashes` lies (one read of the index for all of them).
    func packedMany(_ hashes: [ContentHash]) throws -> [ContentHash: PackPlace] { try index.placesNow(hashes) }

    func url(_ hash: ContentHash) -> URL {
        let (a, b) = hash.fanOut
        return root.appendingPathComponent(a, isDirectory: true).appendingPathComponent(b, isDirectory: true).appendingPathComponent(hash.hex, isDirectory: false)
    }

    public func put(_ hash: ContentHash, _ bytes: [UInt8]) async throws {
        guard ContentHash.of(bytes) == hash else { throw StorageError(.hashMismatch, "the uploaded bytes do not hash to \(hash)") }
        let dest = url(hash)
        let stored = try FileManager.default.fileExists(atPath: dest.path) || packed(hash) != nil  // packed: not again as a loose file
        let tmp = root.appendingPathComponent("tmp").appendingPathComponent("\(hash.hex).\(UInt64.random(in: 0...UInt64.max))")
        do {
            try FileManager.default.createDirectory(at: dest.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileIO.writeDurably(bytes, to: tmp.path)
            writes.count.add(1, ordering: .relaxed)
            // Stored already: the same work, then dropped (see the type's note on timing).
            guard !stored else {
                FileIO.syncDirectory(dest.deletingLastPathComponent().path)
                unlink(tmp.path)
                return
            }
            guard rename(tmp.path, dest.path) == 0 else { throw FileIO.errnoError("rename") }
            FileIO.syncDirectory(dest.deletingLastPathComponent().path)
        } catch {
            unlink(tmp.path)
            throw StorageError(.storageFailure, "cannot store chunk \(hash): \(error)")
        }
    }

    /// Writes the chunks not stored yet into one new pack file, fsyncs it (and its folder), then
    /// records them in the pack index in one transaction.
    public func putMany(_ chunks: [(ContentHash, ArraySlice<UInt8>)], hashesChecked: Bool) async throws {
        let (fresh, stored) = try freshChunks(chunks.map(\.0)) { i in hashesChecked || ContentHash.of(chunks[i].1) == chunks[i].0 }
        if !stored.isEmpty {
            guard let (decoy, _) = PackBytes.copying(stored.lazy.map { chunks[$0].1 }) else { throw StorageError(.storageFailure, "out of memory for a chunk pack") }
            try await writeStandIn(decoy)
        }
        guard !fresh.isEmpty else { return }
        guard let (pack, ranges) = PackBytes.copying(fresh.lazy.map { chunks[$0].1 }) else { throw StorageError(.storageFailure, "out of memory for a chunk pack") }
        try await store(pack, zip(fresh, ranges).map { (chunks[$0].0, $1) })
    }

    /// Like `putMany`, for chunks lying in a received body. When they are nearly all new, the
    /// body itself becomes the pack — written and kept as it is, the framing between its chunks
    /// included — so a batch's bytes are never copied on the server; otherwise the new chunks are
    /// copied into a pack of their own.
    public func putMany(body: PackBytes, chunks: [(ContentHash, Range<Int>)], hashesChecked: Bool) async throws {
        let (fresh, stored) = try freshChunks(chunks.map(\.0)) { i in hashesChecked || body.withBytes(chunks[i].1) { ContentHash.of(buffer: $0) } == chunks[i].0 }
        if fresh.isEmpty && !stored.isEmpty { return try await writeStandIn(body) }  // what storing it all fresh writes
        if !stored.isEmpty {
            let storedBytes = stored.reduce(0) { $0 + chunks[$1].1.count }
            guard let decoy = PackBytes(capacity: storedBytes) else { throw StorageError(.storageFailure, "out of memory for a chunk pack") }
            for i in stored { _ = body.withBytes(chunks[i].1) { decoy.append($0) } }
            try await writeStandIn(decoy)
        }
        guard !fresh.isEmpty else { return }
        let freshBytes = fresh.reduce(0) { $0 + chunks[$1].1.count }
        if freshBytes >= body.count / 4 * 3 {
            return try await store(body, fresh.map { chunks[$0] })
        }
        guard let pack = PackBytes(capacity: freshBytes) else { throw StorageError(.storageFailure, "out of memory for a chunk pack") }
        var parts: [(ContentHash, Range<Int>)] = []
        for i in fresh {
            let start = pack.count
            _ = body.withBytes(chunks[i].1) { pack.append($0) }
            parts.append((chunks[i].0, start..<pack.count))
        }
        try await store(pack, parts)
    }

    /// Positions of the chunks of `hashes` not stored yet and of those stored already (the first
    /// of each hash), each checked with `verifies` first; `hash_mismatch` if one does not.
    func freshChunks(_ hashes: [ContentHash], verifies: (Int) -> Bool) throws -> (fresh: [Int], stored: [Int]) {
        var fresh: [Int] = [], stored: [Int] = []
        var seen = Set<ContentHash>()
        let packed = try packedMany(hashes)
        for (i, hash) in hashes.enumerated() where seen.insert(hash).inserted {
            guard verifies(i) else { throw StorageError(.hashMismatch, "the uploaded bytes do not hash to \(hash)") }
            // A chunk also stored loose (a single `put`) may be packed again: reads find either.
            if packed[hash] == nil { fresh.append(i) } else { stored.append(i) }
        }
        return (fresh, stored)
    }

    /// Writes and flushes `pack` as `store` would, then removes it: the cost of storing chunks
    /// that were stored already (see the type's note on timing).
    func writeStandIn(_ pack: PackBytes) async throws {
        let path = root.appendingPathComponent("tmp").appendingPathComponent("\(UUID().uuidString.lowercased()).pack").path
        let folder = root.appendingPathComponent("packs").path
        defer { unlink(path) }
        do {
            try await BlockingIO.run {
                try FileIO.writeDurably(pack, to: path)
                FileIO.syncDirectory(folder)
            }
        } catch {
            throw StorageError(.storageFailure, "cannot write a chunk pack: \(error)")
        }
        writes.count.add(1, ordering: .relaxed)
    }

    /// Writes `pack` as a new pack file, fsyncs it (and its folder), records where each of
    /// `chunks` lies in it in one transaction, and keeps it in memory for the downloads next.
    func store(_ pack: PackBytes, _ chunks: [(ContentHash, Range<Int>)]) async throws {
        let name = UUID().uuidString.lowercased()
        let path = packURL(name).path
        do {
            let folder = root.appendingPathComponent("packs").path
            try await BlockingIO.run {
                try FileIO.writeDurably(pack, to: path)
                FileIO.syncDirectory(folder)
            }
        } catch {
            unlink(path)
            throw StorageError(.storageFailure, "cannot write a chunk pack: \(error)")
        }
        writes.count.add(1, ordering: .relaxed)
        try await index.record(pack: name, size: pack.count, chunks)
        recent.add(pack, chunks: chunks)
    }

    public func get(_ hash: ContentHash) async throws -> [UInt8]? {
        var bytes: [UInt8]?
        // A second look if the pack went meanwhile (compaction moved the chunk to a new one).
        for _ in 0..<2 {
            guard let p = try packed(hash) else { break }
            if let got = try FileIO.readRange(packURL(p.pack).path, offset: p.offset, size: p.size) { bytes = got; break }
            guard try packed(hash).map({ $0.pack != p.pack }) == true else {
                throw StorageError(.storageFailure, "stored chunk \(hash) is missing from its pack")
            }
        }
        if bytes == nil {
            guard let got = try FileIO.readAll(url(hash).path) else { return nil }
            bytes = got
        }
        guard let bytes, ContentHash.of(bytes) == hash else {
            throw StorageError(.chunkDamaged, "stored chunk \(hash) is damaged on the server")
        }
        return bytes
    }

    /// Chunks stored moments ago come from memory (`RecentChunks`); for the others, one read of
    /// the index for all of them, and requests that lie close together in one pack are read as
    /// one span, straight from disk (`ubiq_read_aligned` into an aligned buffer).
    public func visitMany(_ hashes: [ContentHash], limit: Int, verify: Bool, _ visit: (Int, UnsafeRawBufferPointer) throws -> Void) async throws {
        let remembered = recent.lookup(hashes)
        var where_ = try packedMany(remembered.isEmpty ? hashes : hashes.indices.filter { remembered[$0] == nil }.map { hashes[$0] })
        var lookedAgain = 0
        var open: [String: Int32] = [:]
        defer { for fd in open.values { close(fd) } }
        var buffer: UnsafeMutableRawPointer?
        var bufferSize = 0
        defer { buffer?.deallocate() }
        var total = 0
        var i = 0
        /// Hands over request `k`'s bytes from memory or a loose file, counted and verified.
        func handOver(_ k: Int, _ bytes: UnsafeRawBufferPointer) throws {
            total += bytes.count
            guard total <= limit else { throw StorageError.tooLarge(limit) }
            if verify && ContentHash.of(buffer: bytes) != hashes[k] { throw StorageError(.chunkDamaged, "stored chunk \(hashes[k]) is damaged on the server") }
            try visit(k, bytes)
        }
        while i < hashes.count {
            if let bytes = remembered[i] {
                try bytes.withUnsafeBytes { try handOver(i, $0) }
                i += 1
                continue
            }
            guard let p = where_[hashes[i]] else {
                // A loose chunk (or none).
                if let got = try FileIO.readAll(url(hashes[i]).path) { try got.withUnsafeBytes { try handOver(i, $0) } }
                i += 1
                continue
            }
            // The run of requests from `i` that one span of this pack covers.
            let spanStart = p.offset
            var spanEnd = p.offset + p.size
            var j = i
            while j < hashes.count, let q = where_[hashes[j]], q.pack == p.pack, q.offset >= spanStart,
                  q.offset <= spanEnd + Self.spanGap, max(spanEnd, q.offset + q.size) - spanStart <= Self.spanLimit {
                total += q.size
                guard total <= limit else { throw StorageError.tooLarge(limit) }
                spanEnd = max(spanEnd, q.offset + q.size)
                j += 1
            }
            let fd: Int32
            if let f = open[p.pack] { fd = f } else {
                fd = ubiq_open_direct(packURL(p.pack).path)
                guard fd >= 0 else {
                    // Compaction may have moved what is left of this pack: look the rest up again.
                    guard lookedAgain < 3 else { throw StorageError(.storageFailure, "stored chunk \(hashes[i]) is missing its pack") }
                    lookedAgain += 1
                    total -= (i..<j).reduce(0) { $0 + (where_[hashes[$1]]?.size ?? 0) }
                    let rest = hashes[i...].indices.filter { remembered[$0] == nil }.map { hashes[$0] }
                    let found = try packedMany(rest)
                    for h in rest { where_[h] = found[h] }
                    continue
                }
                open[p.pack] = fd
            }
            // The whole blocks around the span, read straight into an aligned buffer (no bounce copy).
            let alignedStart = spanStart & ~4095, alignedEnd = (spanEnd + 4095) & ~4095
            if alignedEnd - alignedStart > bufferSize {
                buffer?.deallocate()
                bufferSize = alignedEnd - alignedStart
                buffer = UnsafeMutableRawPointer.allocate(byteCount: bufferSize, alignment: 4096)
            }
            nonisolated(unsafe) let into = buffer
            // errno is the I/O thread's: read there.
            let (got, failure) = try await BlockingIO.run {
                let n = Int(ubiq_read_aligned(fd, into, alignedEnd - alignedStart, Int64(alignedStart)))
                return (n, n < 0 ? errno : 0)
            }
            guard got >= 0 else { throw StorageError(.storageFailure, "cannot read pack \(p.pack): \(String(cString: strerror(failure)))") }
            let raw = UnsafeRawBufferPointer(start: buffer! + (spanStart - alignedStart), count: max(0, got - (spanStart - alignedStart)))
            do {
                for k in i..<j {
                    let q = where_[hashes[k]]!
                    let a = q.offset - spanStart
                    guard a + q.size <= raw.count else { throw StorageError(.storageFailure, "stored chunk \(hashes[k]) is missing from its pack") }
                    let bytes = UnsafeRawBufferPointer(rebasing: raw[a..<a + q.size])
                    if verify && ContentHash.of(buffer: bytes) != hashes[k] { throw StorageError(.chunkDamaged, "stored chunk \(hashes[k]) is damaged on the server") }
                    try visit(k, bytes)
                }
            }
            i = j
        }
    }

    /// Requests at most this far apart in a pack are read as one span (the gap read and dropped).
    static let spanGap = 256 << 10
    /// The largest span read at once.
    static let spanLimit = 16 << 20

    public func has(_ hash: ContentHash) async throws -> Bool {
        try packed(hash) != nil || FileManager.default.fileExists(atPath: url(hash).path)
    }
}

/// A count shared by the copies of a store.
final class DurableWrites: Sendable {
    let count = Atomic<Int>(0)
}

/// Small POSIX helpers for durable files.
public enum FileIO {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static func errnoError(_ what: String) -> Error { Failure(description: "\(what): \(String(cString: strerror(errno)))") }

    /// Writes `bytes` to a new file at `path` and fsyncs it.
    public static func writeDurably(_ bytes: [UInt8], to path: String) throws {
        try writeFile(bytes, to: path, sync: true)
    }

    /// Writes a pack to a new file at `path` straight from its aligned memory (past the page
    /// cache where the file system allows, see `ubiq_write_whole`) and fsyncs it.
    static func writeDurably(_ pack: PackBytes, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw errnoError("open \(path)") }
        defer { close(fd) }
        guard ubiq_write_whole(fd, pack.base, pack.paddedForWrite(), Int64(pack.count)) == 0 else { throw errnoError("write \(path)") }
        guard fsync(fd) == 0 else { throw errnoError("fsync \(path)") }
    }

    /// Writes `bytes` to a new file at `path`, fsyncing it if asked.
    static func writeFile(_ bytes: [UInt8], to path: String, sync: Bool) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw errnoError("open \(path)") }
        defer { close(fd) }
        var off = 0
        try bytes.withUnsafeBytes { raw in
            while off < raw.count {
                let n = write(fd, raw.baseAddress! + off, raw.count - off)
                if n < 0 { if errno == EINTR { continue }; throw errnoError("write \(path)") }
                off += n
            }
        }
        if sync { guard fsync(fd) == 0 else { throw errnoError("fsync \(path)") } }
    }

    /// The whole file, or nil if it does not exist.
    public static func readAll(_ path: String) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw StorageError(.storageFailure, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw StorageError(.storageFailure, "cannot stat \(path)") }
        var out = [UInt8](repeating: 0, count: Int(st.st_size))
        var off = 0
        try out.withUnsafeMutableBytes { raw in
            while off < raw.count {
                let n = read(fd, raw.baseAddress! + off, raw.count - off)
                if n < 0 { if errno == EINTR { continue }; throw StorageError(.storageFailure, "cannot read \(path)") }
                if n == 0 { break }
                off += n
            }
        }
        if off < out.count { out.removeLast(out.count - off) }
        return out
    }

    /// `size` bytes at `offset` of a file; nil if it does not exist or is shorter.
    public static func readRange(_ path: String, offset: Int, size: Int) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw StorageError(.storageFailure, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        return try readRange(fd: fd, offset: offset, size: size, path: path)
    }

    /// `size` bytes at `offset` of an open file; nil if it is shorter.
    static func readRange(fd: Int32, offset: Int, size: Int, path: String) throws -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, size - done, off_t(offset + done)) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw StorageError(.storageFailure, "cannot read \(path)") }
            if n == 0 { return nil }
            done += n
        }
        return out
    }

    /// fsyncs a directory so a rename in it is durable.
    public static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
    }
}
