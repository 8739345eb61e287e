import Foundation
import GRDB
import UbiqCore
#if canImport(Glibc)
import Glibc
#endif

/// Garbage collection in a chunk folder. `forget` deletes index rows (and loose files) and
/// notes, per pack, how many of its bytes went (`pack_garbage`, in the same transaction, so a
/// crash loses no note); `compact` then deletes the packs nothing is left in and rewrites those
/// less than half still wanted. A rewrite writes and flushes the new pack before the index moves
/// to it, and removes the old one only after: a crash in between leaves a pack no row names,
/// which the next start removes (`leftovers`). A read that looked a chunk up just before its
/// pack went looks again (`get`, `visitMany`).
extension FolderChunkStore {
    public func storedChunks(pageSize: Int, _ visit: ([StoredChunk]) async throws -> Void) async throws {
        try await index.eachPage(pageSize, visit)
        // Loose chunks (single uploads), a fan-out folder at a time.
        let loose = try await BlockingIO.run { try self.looseChunks() }  // a walk of the fan-out folders
        for page in loose.chunked(max(1, pageSize)) { try await visit(Array(page)) }
    }

    /// Every loose chunk file (`ab/cd/<hash>`), with its size.
    func looseChunks() throws -> [StoredChunk] {
        let fm = FileManager.default
        var out: [StoredChunk] = []
        for a in (try? fm.contentsOfDirectory(atPath: root.path)) ?? [] where a.utf8.count == 2 {
            let first = root.appendingPathComponent(a).path
            for b in (try? fm.contentsOfDirectory(atPath: first)) ?? [] where b.utf8.count == 2 {
                let second = first + "/" + b
                for name in (try? fm.contentsOfDirectory(atPath: second)) ?? [] {
                    guard let h = try? ContentHash(validating: name) else { continue }
                    var st = stat()
                    guard lstat(second + "/" + name, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
                    out.append(StoredChunk(hash: h, size: Int(st.st_size)))
                }
            }
        }
        return out.sorted { $0.hash < $1.hash }
    }

    public func forget(_ hashes: [ContentHash]) async throws -> Int64 {
        guard !hashes.isEmpty else { return 0 }
        var bytes = try await index.forget(hashes)
        for h in hashes {
            var st = stat()
            let path = url(h).path
            if lstat(path, &st) == 0, unlink(path) == 0 { bytes += Int64(st.st_size) }
        }
        return bytes
    }

    public func compact() async throws -> Compaction {
        var result = Compaction()
        let noted = try await index.packsWithGarbage()
        for (pack, live, count) in noted {
            let path = packURL(pack).path
            var st = stat()
            let size: Int64 = lstat(path, &st) == 0 ? Int64(st.st_size) : 0
            if count == 0 {
                if size > 0, unlink(path) == 0 { result.deleted += 1; result.bytesFreed += size }
                try await index.dropNote(pack)
            } else if live * 2 < size {
                let newSize = try await rewrite(pack) ?? size
                result.rewritten += 1
                result.bytesFreed += max(0, size - newSize)
            }
        }
        if result.deleted + result.rewritten > 0 { FileIO.syncDirectory(root.appendingPathComponent("packs").path) }
        return result
    }

    /// Copies the chunks still in `pack` into a new pack (flushed), moves their index rows to it
    /// in one transaction, then removes the old pack. Returns the new pack's size. With
    /// `transform`, each record is handed to it and what it returns takes the record's place;
    /// nil (nothing written) when it changed none.
    func rewrite(_ pack: String, transform: RecordTransform? = nil) async throws -> Int64? {
        let rows = try await index.rows(of: pack)
        let oldPath = packURL(pack).path
        let total = rows.reduce(0) { $0 + $1.size + (transform == nil ? 0 : ChunkSeal.overhead) }
        guard let fresh = PackBytes(capacity: total) else { throw StorageError(.storageFailure, "out of memory for a chunk pack") }
        // Read on an I/O thread: up to 16 MiB from disk.
        let (moved, changed): ([(hash: String, offset: Int, size: Int)], Int) = try await BlockingIO.run {
            var moved: [(hash: String, offset: Int, size: Int)] = []
            var changed = 0
            let fd = open(oldPath, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw StorageError(.storageFailure, "cannot open pack \(pack): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            for r in rows {
                // Copied as they are (a corrupt chunk stays one, and is reported as such when read).
                guard let bytes = try FileIO.readRange(fd: fd, offset: r.offset, size: r.size, path: oldPath) else {
                    throw StorageError(.storageFailure, "pack \(pack) is shorter than its index says")
                }
                let start = fresh.count
                if let transform, let hash = try? ContentHash(validating: r.hash), let new = try bytes.withUnsafeBytes({ try transform(hash, $0) }) {
                    guard new.withUnsafeBytes({ fresh.append($0) }) else { throw StorageError(.storageFailure, "a rewritten record does not fit its pack") }
                    changed += 1
                } else {
                    _ = bytes.withUnsafeBytes { fresh.append($0) }
                }
                moved.append((r.hash, start, fresh.count - start))
            }
            return (moved, changed)
        }
        if transform != nil && changed == 0 { return nil }
        let name = UUID().uuidString.lowercased()
        let newPath = packURL(name).path
        do {
            try await BlockingIO.run { try FileIO.writeDurably(fresh, to: newPath) }
            FileIO.syncDirectory(root.appendingPathComponent("packs").path)
        } catch {
            unlink(newPath)
            throw StorageError(.storageFailure, "cannot write a chunk pack: \(error)")
        }
        writes.count.add(1, ordering: .relaxed)
        try await index.move(moved, from: pack, to: name, size: fresh.count)
        unlink(oldPath)
        return Int64(fresh.count)
    }

    public func rewriteRecords(_ transform: @escaping RecordTransform) async throws -> Int {
        var changed = 0
        for pack in try await index.packNames().sorted() {
            let before = try await index.rows(of: pack).count
            if try await rewrite(pack, transform: transform) != nil { changed += before }
        }
        // Loose chunks (single uploads): each written anew beside itself and renamed over it.
        for chunk in try await BlockingIO.run({ try self.looseChunks() }) {
            let path = url(chunk.hash).path
            guard let bytes = try FileIO.readAll(path), let new = try bytes.withUnsafeBytes({ try transform(chunk.hash, $0) }) else { continue }
            let tmp = root.appendingPathComponent("tmp").appendingPathComponent("\(chunk.hash.hex).\(UInt64.random(in: 0...UInt64.max))").path
            do {
                try FileIO.writeDurably(new, to: tmp)
                guard rename(tmp, path) == 0 else { throw FileIO.errnoError("rename") }
                FileIO.syncDirectory((path as NSString).deletingLastPathComponent)
            } catch {
                unlink(tmp)
                throw StorageError(.storageFailure, "cannot rewrite chunk \(chunk.hash): \(error)")
            }
            changed += 1
        }
        return changed
    }

    public func footprint() async throws -> Int64 {
        let root = self.root
        return try await BlockingIO.run {
            var total: Int64 = 0
            guard let walk = FileManager.default.enumerator(atPath: root.path) else { return 0 }
            while let rel = walk.nextObject() as? String {
                // Chunk data only: the index (a few percent, and its journal grows and shrinks) is not counted.
                guard !rel.hasPrefix("packs.sqlite") else { continue }
                var st = stat()
                if lstat(root.path + "/" + rel, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG { total += Int64(st.st_size) }
            }
            return total
        }
    }

}

extension Array {
    /// Consecutive slices of at most `size` elements.
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
