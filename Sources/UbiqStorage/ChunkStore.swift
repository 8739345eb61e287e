import CFileSupport
import Foundation
import UbiqCore

/// Content-addressed chunk storage. Every implementation verifies a chunk's hash on write and on read.
public protocol ChunkStore: Sendable {
    /// Stores `bytes` under `hash`; `hash_mismatch` if they do not hash to it. Idempotent.
    func put(_ hash: ContentHash, _ bytes: [UInt8]) async throws
    /// The chunk's bytes, verified; nil if absent; `storage_failure` if the stored bytes are corrupt.
    func get(_ hash: ContentHash) async throws -> [UInt8]?
    /// True if the chunk is stored.
    func has(_ hash: ContentHash) async throws -> Bool
    /// Stores several chunks (verified like `put`); durable when it returns.
    func putMany(_ chunks: [(ContentHash, [UInt8])]) async throws
}

extension ChunkStore {
    public func putMany(_ chunks: [(ContentHash, [UInt8])]) async throws {
        for (h, b) in chunks { try await put(h, b) }
    }
}

/// Chunks as files in a folder: `<root>/ab/cd/abcd…` (two levels of fan-out). Writes go to a
/// temporary file, are fsynced and renamed into place, so a crash never leaves a torn chunk
/// under a real name.
public struct FolderChunkStore: ChunkStore {
    public let root: URL

    public init(root: URL) throws {
        self.root = root
        do {
            try FileManager.default.createDirectory(at: root.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        } catch {
            throw StorageError(.storageFailure, "cannot create the chunk folder \(root.path): \(error.localizedDescription)")
        }
    }

    func url(_ hash: ContentHash) -> URL {
        let (a, b) = hash.fanOut
        return root.appendingPathComponent(a).appendingPathComponent(b).appendingPathComponent(hash.hex)
    }

    public func put(_ hash: ContentHash, _ bytes: [UInt8]) async throws {
        guard ContentHash.of(bytes) == hash else { throw StorageError(.hashMismatch, "the uploaded bytes do not hash to \(hash)") }
        let dest = url(hash)
        if FileManager.default.fileExists(atPath: dest.path) { return }
        let tmp = root.appendingPathComponent("tmp").appendingPathComponent("\(hash.hex).\(UInt64.random(in: 0...UInt64.max))")
        do {
            try FileManager.default.createDirectory(at: dest.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileIO.writeDurably(bytes, to: tmp.path)
            guard rename(tmp.path, dest.path) == 0 else { throw FileIO.errnoError("rename") }
            FileIO.syncDirectory(dest.deletingLastPathComponent().path)
        } catch {
            unlink(tmp.path)
            throw StorageError(.storageFailure, "cannot store chunk \(hash): \(error)")
        }
    }

    /// Writes every chunk to a temporary file, makes them all durable with one `syncfs`, renames
    /// them into place and makes the renames durable with a second one: two flushes for a whole
    /// batch instead of two fsyncs per chunk, and still never a torn chunk under a real name.
    public func putMany(_ chunks: [(ContentHash, [UInt8])]) async throws {
        var staged: [(tmp: String, dest: URL)] = []
        defer { for s in staged { unlink(s.tmp) } }  // after success the temporaries are gone already
        for (hash, bytes) in chunks {
            guard ContentHash.of(bytes) == hash else { throw StorageError(.hashMismatch, "the uploaded bytes do not hash to \(hash)") }
            let dest = url(hash)
            if FileManager.default.fileExists(atPath: dest.path) || staged.contains(where: { $0.dest == dest }) { continue }
            let tmp = root.appendingPathComponent("tmp").appendingPathComponent("\(hash.hex).\(UInt64.random(in: 0...UInt64.max))").path
            do {
                try FileIO.writeFile(bytes, to: tmp, sync: false)
            } catch {
                throw StorageError(.storageFailure, "cannot store chunk \(hash): \(error)")
            }
            staged.append((tmp, dest))
        }
        guard !staged.isEmpty else { return }
        try FileIO.syncFileSystem(of: root.path)
        for s in staged {
            do {
                try FileManager.default.createDirectory(at: s.dest.deletingLastPathComponent(), withIntermediateDirectories: true)
            } catch {
                throw StorageError(.storageFailure, "cannot create \(s.dest.deletingLastPathComponent().path): \(error.localizedDescription)")
            }
            guard rename(s.tmp, s.dest.path) == 0 else {
                throw StorageError(.storageFailure, "cannot store chunk: \(FileIO.errnoError("rename"))")
            }
        }
        staged.removeAll()
        try FileIO.syncFileSystem(of: root.path)
    }

    public func get(_ hash: ContentHash) async throws -> [UInt8]? {
        let path = url(hash).path
        guard let bytes = try FileIO.readAll(path) else { return nil }
        guard ContentHash.of(bytes) == hash else {
            throw StorageError(.storageFailure, "stored chunk \(hash) is corrupt")
        }
        return bytes
    }

    public func has(_ hash: ContentHash) async throws -> Bool {
        FileManager.default.fileExists(atPath: url(hash).path)
    }
}

/// Small POSIX helpers for durable files.
public enum FileIO {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static func errnoError(_ what: String) -> Error { Failure(description: "\(what): \(String(cString: strerror(errno)))") }

    /// Writes `bytes` to a new file at `path` and fsyncs it.
    public static func writeDurably(_ bytes: [UInt8], to path: String) throws {
        try writeFile(bytes, to: path, sync: true)
    }

    /// Flushes the whole file system holding `path` (one `syncfs`).
    public static func syncFileSystem(of path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StorageError(.storageFailure, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard ubiq_syncfs(fd) == 0 else { throw StorageError(.storageFailure, "cannot flush the file system of \(path): \(String(cString: strerror(errno)))") }
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

    /// fsyncs a directory so a rename in it is durable.
    public static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
    }
}
