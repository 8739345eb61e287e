import Foundation
import UbiqCore
#if canImport(Glibc)
import Glibc
#endif

/// One entry of a scan of the container folder.
public struct LocalEntry: Sendable, Equatable {
    public var kind: ItemKind
    public var stamp: FileStamp
}

/// File-system effects of the engine: scanning, stamping, hashing, reading chunks. All paths
/// are resolved inside one container folder.
struct LocalFiles: Sendable {
    let root: URL

    func url(_ p: RelativePath) -> URL { root.appendingPathComponent(p.string) }

    /// `lstat` of a path; nil if it does not exist.
    static func stamp(_ path: String) -> (ItemKind?, FileStamp)? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        let kind: ItemKind?
        switch st.st_mode & S_IFMT {
        case S_IFREG: kind = .file
        case S_IFDIR: kind = .folder
        default: kind = nil  // symlinks, sockets, devices are not synced
        }
        return (kind, FileStamp(inode: UInt64(st.st_ino), size: Int64(st.st_size),
                                mtimeNanos: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec),
                                ctimeNanos: Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)))
    }

    func stamp(_ p: RelativePath) -> (ItemKind?, FileStamp)? { Self.stamp(url(p).path) }

    /// Every syncable item under the folder (unsupported names left out); excluded `.nosync`
    /// items are reported apart (they are listed, never synced).
    func scan() -> (items: [RelativePath: LocalEntry], excluded: [RelativePath: LocalEntry]) {
        var out: [RelativePath: LocalEntry] = [:], excluded: [RelativePath: LocalEntry] = [:]
        walk(dir: root.path, prefix: nil, into: &out, excluded: &excluded)
        return (out, excluded)
    }

    private func walk(dir: String, prefix: RelativePath?, into out: inout [RelativePath: LocalEntry], excluded: inout [RelativePath: LocalEntry]) {
        guard let d = opendir(dir) else { return }
        defer { closedir(d) }
        while let ent = readdir(d) {
            let name = withUnsafeBytes(of: ent.pointee.d_name) { raw -> [UInt8] in
                Array(raw.prefix { $0 != 0 })
            }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            guard let s = String(validating: name, as: UTF8.self) else { continue }
            guard let rel = try? (prefix.map { try $0.appending(s) } ?? RelativePath(validating: s)) else { continue }
            let full = dir + "/" + s
            guard let (kind, stamp) = Self.stamp(full), let kind else { continue }
            if rel.isExcluded { excluded[rel] = LocalEntry(kind: kind, stamp: stamp) } else { out[rel] = LocalEntry(kind: kind, stamp: stamp) }
            if kind == .folder { walk(dir: full, prefix: rel, into: &out, excluded: &excluded) }
        }
    }

    /// Chunks and hashes a file by streaming it; nil if it changed while being read (not stable).
    static func manifest(path: String, chunker: Chunker = .standard) throws -> (Manifest, FileStamp)? {
        guard let (_, before) = stamp(path) else { return nil }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw EngineError(.storageFailure, "cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4 * chunker.maxSize + (4 << 20))
        var start = 0, end = 0
        var eof = false
        var whole = StreamingHash()
        var chunks: [ChunkRef] = []
        var total = 0
        while true {
            if !eof && end - start < chunker.maxSize {
                if start > 0 {
                    buffer.withUnsafeMutableBytes { raw in
                        let b = raw.baseAddress!
                        memmove(b, b + start, end - start)
                    }
                    end -= start
                    start = 0
                }
                while end < buffer.count {
                    let n = buffer.withUnsafeMutableBytes { raw in Glibc.read(fd, raw.baseAddress! + end, raw.count - end) }
                    if n < 0 { if errno == EINTR { continue }; throw EngineError(.storageFailure, "cannot read \(path)") }
                    if n == 0 { eof = true; break }
                    end += n
                }
            }
            if start == end { break }
            let cut = buffer.withUnsafeBytes { raw -> (Int, ContentHash) in
                let window = UnsafeRawBufferPointer(rebasing: raw[start..<end])
                let len = chunker.nextCut(in: window)
                let piece = UnsafeRawBufferPointer(rebasing: window[0..<len])
                whole.update(piece)
                return (len, ContentHash.of(buffer: piece))
            }
            chunks.append(ChunkRef(hash: cut.1, size: cut.0))
            start += cut.0
            total += cut.0
        }
        guard let (_, after) = stamp(path), after == before, Int64(total) == after.size else { return nil }
        return (Manifest(chunks: chunks, size: total, hash: whole.finalize()), after)
    }

    /// Reads `size` bytes at `offset` of a file.
    static func read(path: String, offset: Int, size: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let n = out.withUnsafeMutableBytes { raw in pread(fd, raw.baseAddress! + done, size - done, off_t(offset + done)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return nil }
            done += n
        }
        return out
    }

    /// Creates every missing folder up to `url`.
    static func makeParents(of url: URL) throws {
        do { try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true) } catch {
            throw EngineError(.storageFailure, "cannot create folder \(url.deletingLastPathComponent().path): \(error.localizedDescription)")
        }
    }
}
