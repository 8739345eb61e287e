import Foundation
import Logging
import UbiqCore
#if canImport(Glibc)
import Glibc
#endif

/// What a change to the folder came to, for the engine to record in its trees
/// (``SyncEngine/apply(_:)-LocalOutcome``): the step itself writes no tree.
enum LocalOutcome: Sendable, Equatable {
    /// Nothing changed: the folder was not as the plan saw it (planned again next round).
    case unchanged
    /// The server's folder made here, with its stamp.
    case folderMade(ItemID, path: RelativePath, stamp: FileStamp)
    /// The item moved from `from` (where it was, and where its merge base was) to `to`.
    case moved(ItemID, from: RelativePath, to: RelativePath, entry: LocalEntry)
    /// The item is gone from the folder (and so is its merge base).
    case removed(ItemID)
    /// Renamed beside a name taken on the server (`name (2)`).
    case renamedAside(ItemID, to: RelativePath, entry: LocalEntry)
    /// Both sides agree: the new merge base (and, for a folder both sides moved to the same
    /// place, where its contents' merge bases move from).
    case agreed(ItemID, entry: SyncedEntry, folderMovedFrom: RelativePath?)
    /// The file of an evicted item is gone (the eviction was recorded before the unlink).
    case evicted(ItemID)
}

/// The engine's changes to the synced folder: the plan's local steps (make, move, delete a
/// folder or file), renames beside a taken name, evictions, and the front end's rename and new
/// folder. Each checks that the folder is still as the plan (or the scan) saw it, makes the
/// change through `FolderAccess` — nothing else in the engine changes the folder, so a test's
/// failing disk reaches every step — and returns what came of it (``LocalOutcome``); it reads
/// the trees and never writes them. Runs on the engine's queue; never suspends, so no pass or
/// command runs between a check and its change and the engine's recording of it.
struct LocalSteps {
    let files: LocalFiles
    let disk: any FolderAccess
    let trees: ItemTrees
    /// A folder on the folder's file system for files on their way out (the partial folder).
    let aside: String
    let logger: Logger

    /// Missing parent folders may be created for `path` unless one of them is a synced folder
    /// that the user has just moved or deleted (recreating it would undo their change).
    func mayCreateParents(of path: RelativePath) -> Bool {
        var a = path.parent
        while let ancestor = a {
            if LocalFiles.stamp(files.path(ancestor)) == nil, trees.hasSyncedFolder(at: ancestor) {
                return false
            }
            a = ancestor.parent
        }
        return true
    }

    /// The server's folder `id`, made here (and its parents, unless the user just removed one).
    func createFolder(_ id: ItemID) throws -> LocalOutcome {
        guard let r = trees.remote[id], r.node.kind == .folder else { return .unchanged }
        try files.checkParents(r.node.path)
        let path = files.path(r.node.path)
        if let (kind, _) = LocalFiles.stamp(path) {
            guard kind == .folder else { return .unchanged }  // a file is in the way: the scan and planner sort it out
            // The folder there is another item's (one whose move away failed, or has not run
            // yet): taking it as this one's too gave one folder two items, and once the other
            // moved it away this item looked deleted here — deleted on the server with what
            // other devices had put in it. This one is made once the path is free.
            if trees.local.contains(where: { $0.key != id && $0.value.path == r.node.path }) { return .unchanged }
        } else {
            guard mayCreateParents(of: r.node.path) else { return .unchanged }
            try disk.makeParents(of: path)
            let e = disk.makeFolder(path)
            guard e == 0 || e == EEXIST else { throw EngineError(.storageFailure, "cannot create \(r.node.path): \(errnoText(e))") }
        }
        guard let (_, stamp) = LocalFiles.stamp(path) else { return .unchanged }
        return .folderMade(id, path: r.node.path, stamp: stamp)
    }

    /// Moves the local item to `to` if it is still the one the scan saw and `to` is free.
    func move(_ id: ItemID, to: RelativePath) throws -> LocalOutcome {
        guard let l = trees.local[id] else { return .unchanged }
        try files.checkParents(l.path)
        try files.checkParents(to)
        let src = files.path(l.path), dst = files.path(to)
        guard LocalFiles.stamp(dst) == nil, LocalFiles.stamp(src)?.1.inode == l.entry.stamp.inode, mayCreateParents(of: to) else { return .unchanged }
        try disk.makeParents(of: dst)
        let e = disk.rename(src, dst, .noReplace)
        if e == EEXIST { return .unchanged }  // something appeared there meanwhile: planned again
        guard e == 0 else { throw EngineError(.storageFailure, "cannot move \(l.path) to \(to): \(errnoText(e))") }
        return .moved(id, from: l.path, to: to, entry: l.entry)
    }

    /// Deletes the local item: a folder once empty, a file only if it is still exactly what
    /// the scan saw (checked after moving it aside, so an edit made in that instant is put
    /// back, not lost).
    func delete(_ id: ItemID) throws -> LocalOutcome {
        guard let l = trees.local[id] else { return .unchanged }
        try files.checkParents(l.path)
        let path = files.path(l.path)
        if l.entry.kind == .folder {
            let e = disk.removeFolder(path)
            guard e == 0 || e == ENOENT else { return .unchanged }  // not empty (or failing): wait for its contents
        } else {
            guard try LocalRemoval.remove(path, expected: l.entry.stamp, aside: aside, disk: disk) else { return .unchanged }
        }
        return .removed(id)
    }

    /// Renames a local item at `path` to the first free `path (n)` (free here and on the server).
    func renameAside(_ id: ItemID, from path: RelativePath) throws -> LocalOutcome {
        guard let l = trees.local[id], l.path == path else { return .unchanged }
        try files.checkParents(path)
        guard let to = try putAside(files.path(path), as: path) else { return .unchanged }
        logger.info("\(path) is taken on the server: renamed to \(to.name)")
        return .renamedAside(id, to: to, entry: l.entry)
    }

    /// Renames the file at the absolute path `from` to the first `base (n)` free here and on
    /// the server; nil if none of the first thousand is.
    func putAside(_ from: String, as base: RelativePath) throws -> RelativePath? {
        let taken = Set(trees.remote.values.map(\.node.path))
        for n in 2..<1000 {
            let to = base.numbered(n)
            if taken.contains(to) || LocalFiles.stamp(files.path(to)) != nil { continue }
            let e = disk.rename(from, files.path(to), .noReplace)
            if e == 0 { return to }
            guard e == EEXIST else { throw EngineError(.storageFailure, "cannot rename \(base) to \(to.name): \(errnoText(e))") }
        }
        return nil
    }

    /// Both sides agree on the item: it becomes the merge base.
    func markSynced(_ id: ItemID) -> LocalOutcome {
        guard let l = trees.local[id], let r = trees.remote[id], l.entry.kind == r.node.kind else { return .unchanged }
        let path = l.path == r.node.path ? l.path : (trees.synced[id]?.node.path ?? r.node.path)
        // Both sides moved a folder to the same place (another device did the same, or the
        // answer to this device's own move was lost): the merge bases of what it holds move
        // with it. Left behind, an item the user moved out of it afterwards looked moved on
        // both sides, and the server's older place won: the user's move was undone.
        let old = trees.synced[id]?.node.path
        let movedFrom = r.node.kind == .folder && old != path ? old : nil
        return .agreed(id, entry: SyncedEntry(node: SyncedNode(path: path, kind: r.node.kind, version: r.node.version, hash: r.node.hash),
                                             stamp: l.entry.stamp, stampHash: trees.localHashes[id]), folderMovedFrom: movedFrom)
    }

    /// Removes the file of an item whose content the server has, if it is still exactly what
    /// the scan saw. `mark` records the eviction first (and forgets the merge base): a mark
    /// without the unlink, after a crash, leaves a file that is re-identified and matched,
    /// never a delete.
    func evict(_ id: ItemID, mark: () throws -> Void) throws -> LocalOutcome {
        guard let l = trees.local[id] else { return .unchanged }
        try files.checkParents(l.path)
        let path = files.path(l.path)
        guard let (_, now) = LocalFiles.stamp(path), now == l.entry.stamp else {
            throw EngineError(.invalidRequest, "\(l.path) changed just now; try again")
        }
        try mark()
        let e = disk.removeFile(path)
        guard e == 0 || e == ENOENT else { throw EngineError(.storageFailure, "cannot remove \(l.path): \(errnoText(e))") }
        return .evicted(id)
    }

    /// Renames a local item as a person would in a shell, never over anything.
    func rename(_ path: RelativePath, to target: RelativePath) throws {
        try files.checkParents(path)
        try files.checkParents(target)
        let e = disk.rename(files.path(path), files.path(target), .noReplace)
        guard e == 0 else { throw EngineError(e == EEXIST ? .pathExists : .storageFailure, "cannot rename \(path): \(errnoText(e))") }
    }

    /// Makes a new, empty folder (its parent must be there).
    func makeFolder(_ path: RelativePath) throws {
        try files.checkParents(path)
        let e = disk.makeFolder(files.path(path))
        guard e == 0 else { throw EngineError(e == EEXIST ? .pathExists : .storageFailure, "cannot make \(path): \(errnoText(e))") }
    }

    /// Puts a held file that was written after a download swapped it out back into the folder,
    /// beside its document `doc`, as `name (n).ext` (a new item, uploaded by the next pass).
    /// Returns where it went.
    func putBack(held path: String, document doc: RelativePath?) -> RelativePath? {
        let name = doc?.name ?? "recovered.txt"
        // The nearest folder of the document's that is here (the container folder at worst).
        var folder = doc?.parent
        while let p = folder, LocalFiles.stamp(files.path(p))?.0 != .folder || !files.parentsAreFolders(p) { folder = p.parent }
        guard let base = try? folder.map({ try $0.appending(name) }) ?? RelativePath(validating: name) else { return nil }
        do {
            return try putAside(path, as: base)
        } catch {
            logger.warning("cannot put back \(path) beside \(base): \(error)")
            return nil
        }
    }

    /// Settles the files downloads swapped out (see `HeldFiles`): one written after the swap
    /// goes back into the folder beside its document (`restored`: the document, where it went);
    /// the others are removed once held `HeldFiles.holdTime`. `wait`: seconds until the next
    /// is due (nil: none is held).
    func settleHeld(now: TimeInterval) -> (restored: [(document: RelativePath?, to: RelativePath)], wait: Double?) {
        var restored: [(RelativePath?, RelativePath)] = []
        var wait: Double?
        for f in HeldFiles.list(aside, now: now) {
            if f.written {
                let doc = trees.local[f.item]?.path ?? trees.synced[f.item]?.node.path ?? trees.remote[f.item]?.node.path
                if let to = putBack(held: f.path, document: doc) { restored.append((doc, to)) }
            } else if f.age >= HeldFiles.holdTime {
                unlink(f.path)
            } else {
                wait = min(wait ?? .infinity, HeldFiles.holdTime - f.age)
            }
        }
        return (restored, wait)
    }
}
