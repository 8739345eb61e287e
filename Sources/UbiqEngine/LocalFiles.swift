import CFileSupport
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
    /// `root`'s path without a trailing slash.
    let rootPath: String
    /// Cuts and names the folder's files (its naming is the account's: see `ChunkNaming`).
    let chunker: Chunker

    init(root: URL, chunker: Chunker = .standard) {
        self.root = root
        self.chunker = chunker
        var path = root.path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        rootPath = path
    }

    /// (With the kind left open Foundation would stat the path to decide; that cost 6 % of the
    /// CPU of syncing 10,000 small files.)
    func url(_ p: RelativePath) -> URL { root.appendingPathComponent(p.string, isDirectory: false) }

    /// The file system path of `p`: joined as text, as building a `URL` costs several
    /// microseconds a path (2–3 % of the CPU of syncing 10,000 small files).
    func path(_ p: RelativePath) -> String { rootPath + "/" + p.string }

    /// `lstat` of a path (through `statx`); nil if it does not exist.
    static func stamp(_ path: String) -> (ItemKind?, FileStamp)? {
        var st = ubiq_stat()
        guard ubiq_stat_at(AT_FDCWD, path, &st) == 0 else { return nil }
        return stamp(of: st)
    }

    /// A file's permission bits (`0o777` at most), as sent with its content.
    static func permissions(_ path: String) -> Int? {
        var st = ubiq_stat()
        guard ubiq_stat_at(AT_FDCWD, path, &st) == 0 else { return nil }
        return Int(mode_t(st.mode) & 0o777)
    }

    /// Gives a downloaded file the permission bits its writer had (never without the owner's
    /// read bit: this engine reads the file to sync it), before it is renamed into place. Nil (or
    /// bits out of range): a new file's default, `0666` less the process's umask. Partial files
    /// are made `0600` (#45 row 4: another user read a `0600` document while it downloaded), so
    /// this is what opens a file to others, and only once it is whole.
    static func setPermissions(_ fd: Int32, _ permissions: Int?) {
        let p = permissions.flatMap { (0...0o777).contains($0) ? $0 : nil } ?? defaultFileMode
        fchmod(fd, mode_t(p | 0o400))
    }

    /// The mode a new file gets from `open(…, 0666)`: read once from `/proc/self/status`, since
    /// reading the umask with `umask()` changes it for every thread for a moment.
    static let defaultFileMode: Int = {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.hasPrefix("Umask:") {
            if let mask = Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8) { return 0o666 & ~mask }
        }
        return 0o644
    }()

    /// Kind and stamp from a `statx` result. The stamp's `inode` is the file's identity: its inode
    /// number mixed with its birth time, so an inode number the file system hands to a new file
    /// (ext4 reuses a deleted one's at once) names a different file, never the old one's item.
    static func stamp(of st: ubiq_stat) -> (ItemKind?, FileStamp) {
        let kind: ItemKind?
        switch mode_t(st.mode) & S_IFMT {
        case S_IFREG: kind = .file
        case S_IFDIR: kind = .folder
        default: kind = nil  // symlinks, sockets, devices are not synced
        }
        return (kind, FileStamp(inode: identity(inode: st.ino, birthNanos: st.btime_ns), size: st.size,
                                mtimeNanos: st.mtime_ns, ctimeNanos: st.ctime_ns))
    }

    /// An inode number and a birth time as one 64-bit identity (the inode number alone where the
    /// file system records no birth time).
    static func identity(inode: UInt64, birthNanos: Int64) -> UInt64 {
        guard birthNanos != 0 else { return inode }
        var z = UInt64(bitPattern: birthNanos) &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return inode ^ (z ^ (z >> 31))
    }

    func stamp(_ p: RelativePath) -> (ItemKind?, FileStamp)? { Self.stamp(url(p).path) }

    /// What a walk of the folder found: every syncable item (unsupported names left out);
    /// excluded `.nosync` items apart (they are listed, never synced); and the paths held by
    /// something that is neither a file nor a folder (a symbolic link, a socket, a device),
    /// which are never followed, never synced, and never taken for a deletion.
    struct Scan: Sendable {
        var items: [RelativePath: LocalEntry] = [:]
        var excluded: [RelativePath: LocalEntry] = [:]
        var opaque: Set<RelativePath> = []
        /// Of a partial walk (`scan(only:over:)`): the files and folders the folders read again
        /// hold (nil for a whole walk, or when they also hold something else).
        var reread: [RelativePath: LocalEntry]?
    }

    /// Walks the whole folder.
    func scan() -> Scan {
        var out = Scan()
        walk(dir: root.path, prefix: nil, into: &out)
        return out
    }

    /// Starts `scan()` on another thread and returns a function that waits for its result by
    /// blocking (not suspending: a caller on the engine's queue keeps the queue, so nothing
    /// else can change the engine's state while it waits).
    func startScan() -> () -> Scan { Self.onAnotherThread { self.scan() } }

    /// Runs a walk on another thread; the function returned waits for it by blocking.
    static func onAnotherThread(_ work: @escaping @Sendable () -> Scan) -> () -> Scan {
        final class Box: @unchecked Sendable { var value: Scan? }
        let box = Box(), group = DispatchGroup()
        DispatchQueue.global(qos: .userInitiated).async(group: group) { box.value = work() }
        return {
            group.wait()  // the group's wait orders the worker's write before this read
            return box.value!
        }
    }

    /// An earlier walk with only `dirs` read again (nil: the root): each one's entries, and the
    /// whole of any folder in it the earlier walk did not have. Exact only when nothing was
    /// moved or removed since that walk (the watcher's count of such events says so).
    func scan(only dirs: [RelativePath?], over base: consuming Scan) -> Scan {
        // Taken over, not copied: at 1,000,000 files a copy of the last walk's table was most of
        // a partial walk (~0.1 s, #42); the caller hands it over as its only holder.
        var out = consume base
        out.reread = [:]
        for dir in dirs {
            let full = dir.map(path) ?? rootPath
            var found = Scan()
            walk(dir: full, prefix: dir, into: &found, recursing: { out.items[$0] == nil && out.excluded[$0] == nil })
            out.items.merge(found.items) { _, new in new }
            // Something neither file nor folder, or excluded: the whole folder is claimed.
            out.reread = found.opaque.isEmpty && found.excluded.isEmpty ? out.reread?.merging(found.items) { _, new in new } : nil
            out.excluded.merge(found.excluded) { _, new in new }
            out.opaque.formUnion(found.opaque)
        }
        return out
    }

    /// `scan(only:over:)` on another thread (see `startScan()`).
    func startScan(only dirs: [RelativePath?], over base: ScanHandoff) -> () -> Scan {
        Self.onAnotherThread { self.scan(only: dirs, over: base.take()) }
    }

    /// A walk handed to the thread that walks again over it, with no other holder left (so
    /// its tables change in place there).
    final class ScanHandoff: @unchecked Sendable {
        private var scan: Scan?
        init(_ scan: consuming Scan) { self.scan = consume scan }
        /// The walk; the hand-off no longer holds it.
        func take() -> Scan {
            guard let s = scan.take() else { preconditionFailure("a walk handed over twice") }
            return s
        }
    }

    private func walk(dir: String, prefix: RelativePath?, into out: inout Scan, recursing: ((RelativePath) -> Bool)? = nil) {
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
            var st = ubiq_stat()
            guard ubiq_stat_at(dirfd(d), s, &st) == 0 else { continue }
            let (kind, stamp) = Self.stamp(of: st)
            guard let kind else {
                out.opaque.insert(rel)
                continue
            }
            if rel.isExcluded { out.excluded[rel] = LocalEntry(kind: kind, stamp: stamp) } else { out.items[rel] = LocalEntry(kind: kind, stamp: stamp) }
            if kind == .folder, recursing?(rel) ?? true { walk(dir: full, prefix: rel, into: &out) }
        }
        WalkHooks.hook(rootPath)?(prefix)
    }

    /// True when every folder on the way to `p` that exists is a real folder, not a symbolic
    /// link (or anything else): a path through a link would read or write outside the synced
    /// folder. Checked before every change the engine makes at a path.
    func parentsAreFolders(_ p: RelativePath) -> Bool {
        var ancestors: [RelativePath] = []
        var a = p.parent
        while let x = a { ancestors.append(x); a = x.parent }
        for x in ancestors.reversed() {
            var st = ubiq_stat()
            guard ubiq_stat_at(AT_FDCWD, path(x), &st) == 0 else { return true }  // nothing below exists yet
            guard mode_t(st.mode) & S_IFMT == S_IFDIR else { return false }
        }
        return true
    }

    /// Throws unless `parentsAreFolders(p)`.
    func checkParents(_ p: RelativePath) throws {
        guard parentsAreFolders(p) else {
            throw EngineError(.invalidPath, "a folder on the way to '\(p)' is a symbolic link (or not a folder) here; it is not followed")
        }
    }

    /// Chunks and hashes a file; nil if it changed while being read (not stable). A file of
    /// 16 MiB or more is cut and hashed in parts on every core (`Chunker.parallelChunks`: the
    /// same chunks as one pass), each part reading with `pread`. The file's hash comes from the
    /// chunk list (`Manifest.contentHash`): one SHA-256 pass over the bytes.
    static func manifest(path: String, chunker: Chunker = .standard) throws -> (Manifest, FileStamp)? {
        try manifest(path: path, chunker: chunker, keepingUpTo: 0).map { ($0.0, $0.1) }
    }

    /// `manifest(path:)`, also returning the file's bytes when it is at most `keep` bytes long
    /// (they were read to hash it; an upload that follows need not read them again).
    static func manifest(path: String, chunker: Chunker = .standard, keepingUpTo keep: Int) throws -> (Manifest, FileStamp, [UInt8]?)? {
        guard let (_, before) = stamp(path) else { return nil }
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw EngineError(.storageFailure, "cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let size = Int(before.size)
        if size < 4 << 20 {
            guard let (m, st, bytes) = try smallManifest(fd: fd, path: path, before: before, chunker: chunker) else { return nil }
            return (m, st, size <= keep ? bytes : nil)
        }
        let parts = max(1, min(ProcessInfo.processInfo.activeProcessorCount, size / (8 << 20)))
        let chunks = try chunker.parallelChunks(size: size, parts: parts) { offset, buffer in
            while true {
                let n = pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
                if n >= 0 { return n }
                if errno != EINTR { throw EngineError(.storageFailure, "cannot read \(path): \(String(cString: strerror(errno)))") }
            }
        }
        let total = chunks.reduce(0) { $0 + $1.size }
        guard let (_, after) = stamp(path), after == before, total == size else { return nil }
        return (Manifest(chunks: chunks), after, nil)
    }

    /// A small file's manifest on this thread alone (starting two queues costs more than it saves).
    private static func smallManifest(fd: Int32, path: String, before: FileStamp, chunker: Chunker) throws -> (Manifest, FileStamp, [UInt8])? {
        var bytes = [UInt8](repeating: 0, count: Int(before.size) + 1)  // one more byte shows a file that grew
        var filled = 0
        while filled < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0 { if errno == EINTR { continue }; throw EngineError(.storageFailure, "cannot read \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            filled += n
        }
        guard filled == Int(before.size) else { return nil }
        bytes.removeLast()
        let chunks = bytes.withUnsafeBytes { raw in
            chunker.chunkRanges(of: bytes).map { ChunkRef(hash: chunker.naming.name(UnsafeRawBufferPointer(rebasing: raw[$0])), size: $0.count) }
        }
        guard let (_, after) = stamp(path), after == before else { return nil }
        return (Manifest(chunks: chunks), after, bytes)
    }

    /// Reads `size` bytes at `offset` of a file.
    static func read(path: String, offset: Int, size: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
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

/// The engine's file reader, for benchmarks and tools.
public enum FileManifest {
    /// Chunks and hashes the file at `path` the way the engine does before an upload (in parts
    /// on every core); nil if the file changed while being read.
    public static func read(path: String) throws -> Manifest? {
        try LocalFiles.manifest(path: path)?.0
    }
}

/// Tests: a function run when a walk of a container folder has read a folder (and everything
/// in it), so a test can move things while a walk runs, as a user may.
enum WalkHooks {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var hooks: [String: @Sendable (RelativePath?) -> Void] = [:]

    /// Sets (or, with nil, removes) the hook of the container folder at `root`.
    static func set(_ root: String, _ hook: (@Sendable (RelativePath?) -> Void)?) { lock.withLock { hooks[root] = hook } }

    static func hook(_ root: String) -> (@Sendable (RelativePath?) -> Void)? { lock.withLock { hooks.isEmpty ? nil : hooks[root] } }
}
