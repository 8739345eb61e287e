import CFileSupport
import Foundation
import UbiqCore
#if canImport(Glibc)
import Glibc
#endif

/// A verified partial file to rename into place: pure file-system work, safe off the control
/// queue.
struct Placement: Sendable {
    /// The verified partial file.
    let partial: String
    /// Where it goes.
    let dest: String
    /// The destination relative to the container folder, as the watcher reports it.
    let path: String
    /// The local file's stamp when the download was planned (nil: there was none).
    let expected: FileStamp?

    /// Renames each partial file into place, unless its local file is no longer as the plan saw
    /// it (a local edit is never overwritten: it will be uploaded, and become a conflict if need
    /// be; that partial file is removed). Returns, per placement, nil when skipped, else the
    /// stamp to record with the downloaded content's hash: the placed file's own stamp when it
    /// is still the partial's file and untouched (same inode, size and modification time, and
    /// no write reported for the path since just before the renames); otherwise the partial's
    /// stamp, which no longer matches the file, so the next scan hashes what is there. An edit
    /// made in the instant after a rename is therefore uploaded, never mistaken for the
    /// downloaded content.
    ///
    /// The check and the rename are one atomic step where the kernel allows it, so a file the
    /// user creates or saves in the instant between them is kept: a new file goes in with
    /// `RENAME_NOREPLACE` (refused if something appeared there), a replacement is swapped in
    /// with `RENAME_EXCHANGE` and the file swapped out must still be the planned one (same inode,
    /// size and modification time), else it is swapped back and the download dropped.
    /// `beforeRename` lets tests act in that instant.
    static func place(_ items: [Placement], disk: any FolderAccess = SystemFolder(), watcher: DirectoryWatcher?, settle: Duration,
                      coordination: Coordination? = nil, beforeRename: ((Placement) -> Void)? = nil) throws -> [FileStamp?] {
        var out = [FileStamp?](repeating: nil, count: items.count)
        let seq = watcher?.writes(settle: settle).seq ?? 0
        var renamed: [Int] = []
        var parentsSeen = Set<Substring>()
        for (i, p) in items.enumerated() {
            // A file a program holds under coordination is not replaced (the download comes again).
            guard coordination?.covers(p.path) != true, LocalFiles.stamp(p.dest)?.1 == p.expected,
                  let (_, partialStamp) = LocalFiles.stamp(p.partial) else {
                unlink(p.partial)
                continue
            }
            // Each folder is looked at once per batch (a batch's files share a few folders).
            let parent = Self.parent(p.dest)
            if !parentsSeen.contains(parent) {
                if LocalFiles.stamp(String(parent)) == nil { try disk.makeParents(of: p.dest) }
                parentsSeen.insert(parent)
            }
            beforeRename?(p)
            guard try swapIn(p, disk: disk) else {
                unlink(p.partial)
                continue
            }
            out[i] = partialStamp
            renamed.append(i)
        }
        // Stat every placed file first, then ask the watcher: a write before a stat is then seen.
        var after: [Int: FileStamp] = [:]
        for i in renamed { after[i] = LocalFiles.stamp(items[i].dest)?.1 }
        let written = watcher?.written(renamed.map { items[$0].path }, since: seq) ?? []
        for i in renamed {
            guard let b = out[i], let a = after[i], a.sameFileUnwritten(as: b), !written.contains(items[i].path) else { continue }
            out[i] = a
        }
        return out
    }
}

extension Placement {
    /// The folder holding the absolute path `path` (`/a/b` for `/a/b/c`), cut at its last `/`
    /// without Foundation's path parsing.
    static func parent(_ path: String) -> Substring {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        return slash == path.utf8.startIndex ? "/" : path[..<slash]
    }

    /// Puts the partial file at `dest` if `dest` is still as planned at that instant; false
    /// (nothing changed at `dest`) if it is not. Falls back to a plain rename on file systems
    /// without `renameat2` flags.
    static func swapIn(_ p: Placement, disk: any FolderAccess) throws -> Bool {
        func failed(_ what: String, _ e: Int32) -> EngineError {
            EngineError(.storageFailure, "cannot place \(p.path) (\(what)): \(errnoText(e))")
        }
        if let expected = p.expected {
            let e = disk.rename(p.partial, p.dest, .exchange)
            if e == 0 {
                // The partial path now holds what was at `dest`: the planned file, or a newer one.
                if let (_, old) = LocalFiles.stamp(p.partial), old.sameFileUnwritten(as: expected) {
                    // Held, not removed: a program that opened the file before the swap may
                    // still write to it (`HeldFiles`).
                    if rename(p.partial, HeldFiles.name(partial: p.partial, stamp: old)) != 0 { unlink(p.partial) }
                    return true
                }
                // Saved or replaced meanwhile: swap back; the caller removes the download.
                let back = disk.rename(p.partial, p.dest, .exchange)
                guard back == 0 else { throw failed("restoring the local file", back) }
                return false
            }
            if e == ENOENT { return false }  // removed meanwhile: the removal is synced instead
            guard e == EINVAL || e == ENOSYS else { throw failed("exchange", e) }
        } else {
            let e = disk.rename(p.partial, p.dest, .noReplace)
            if e == 0 { return true }
            if e == EEXIST { return false }  // created meanwhile: the user's file stays
            guard e == EINVAL || e == ENOSYS else { throw failed("rename", e) }
        }
        let e = disk.rename(p.partial, p.dest, .replace)
        guard e == 0 else { throw failed("rename", e) }
        return true
    }
}

/// A batch of downloaded small files on their way from fetched chunks to their places.
struct WrittenFiles: Sendable {
    struct Item: Sendable {
        let manifest: Manifest
        let partial: String
        let modified: Date?
        let permissions: Int?
        let placement: Placement
    }
    let items: [Item]

    /// Assembles each file from verified `chunks` into its partial file (checking the chunk list
    /// against the version's hash)
    /// and fsyncs it, on a few threads; renames each into place (see `Placement.place`) and
    /// fsyncs the folders it went into. Only this batch's files are flushed, never the whole
    /// file system (other programs' writes would make every batch wait). Returns the stamps to
    /// record, one per item (nil: skipped for a local edit).
    func writeAndPlace(chunks: [ContentHash: [UInt8]], disk: any FolderAccess, watcher: DirectoryWatcher?, settle: Duration,
                       coordination: Coordination? = nil) throws -> [FileStamp?] {
        let items = self.items
        try FileIOSync.inParallel(items.count) { i in
            let item = items[i], m = item.manifest
            var bytes: [UInt8] = []
            bytes.reserveCapacity(m.size)
            for c in m.chunks {
                guard let b = chunks[c.hash] else { throw EngineError(.hashMismatch, "chunk \(c.hash) missing") }
                bytes.append(contentsOf: b)
            }
            // Each chunk was checked when it arrived (or was read locally); the list against the hash.
            guard bytes.count == m.size, m.isConsistent else {
                throw EngineError(.hashMismatch, "download of \(item.placement.path) did not verify; it will be fetched again")
            }
            try PartialDownload.writeFile(bytes, to: item.partial, modified: item.modified, permissions: item.permissions, sync: true)
        }
        let stamps = try Placement.place(items.map(\.placement), disk: disk, watcher: watcher, settle: settle, coordination: coordination)
        var folders = Set<String>()
        for (item, stamp) in zip(items, stamps) where stamp != nil { folders.insert(String(Placement.parent(item.placement.dest))) }
        try FileIOSync.folders(folders)
        return stamps
    }
}

