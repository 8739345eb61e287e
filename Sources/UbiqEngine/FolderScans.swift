import Logging
import UbiqCore

/// What the engine keeps of its reads of the folder: when it last read all of it, and the last
/// walk with the watcher's count of moves and removals it is exact for. A pass skips the walk
/// while the watcher vouches that nothing changed since (`SyncEngine.folderKnownUnchanged`);
/// a scan after changes that moved and removed nothing reads only the folders they were in
/// (`partial(since:watcherComplete:now:)`). Neither for longer than `fullEvery`.
public struct FolderScans: Sendable {
    /// The longest the engine trusts the watcher without reading the whole folder again:
    /// changes inotify does not report (a write through a memory map, through a hard link's
    /// other name, inside a `.nosync` folder) wait this long.
    public static let standardFullEvery: Duration = .seconds(300)
    /// This engine's (tests shorten it).
    let fullEvery: Duration
    /// The most inotify watches the engine's watcher adds (nil: what the kernel gives; tests
    /// run out of watches with it).
    let watchLimit: Int?
    /// What the log was last told about folders not watched (said once per change).
    var unwatchedSaid: String?

    init(fullEvery: Duration, watchLimit: Int? = nil) {
        self.fullEvery = fullEvery
        self.watchLimit = watchLimit
    }
    /// More folders changed than this: the whole folder is read.
    static let partialLimit = 256
    /// When the last complete scan began (nil: the next scan reads everything).
    var lastFull: ContinuousClock.Instant?
    /// Files the last scan left unhashed because a program was writing them under coordination:
    /// the pass it asks for when done must read the folder.
    var unhashed = 0
    /// Walks so far, of the whole folder and of changed folders only.
    var fullWalks = 0, partialWalks = 0
    /// Claims of the whole folder so far, and of a partial walk's new entries alone.
    var wholeClaims = 0, newClaims = 0
    /// Items of the last whole claims held by links (in the Local tree, not in the walk).
    var held = 0
    /// The last calm walk, and the watcher's count of moves and removals it is exact for.
    var lastWalk: (scan: LocalFiles.Scan, structural: UInt64)?

    /// True when reading the folder again would find what the last scan found: the watcher
    /// covers every folder and saw nothing but the engine's own placements since
    /// (`foreignAtScan`), no file was still being written (by anyone, or by a program under
    /// coordination) or failed (`settled`), and the last full read is recent — a change
    /// inotify does not report waits at most `fullEvery`. A pass for another device's change
    /// then costs no walk of the whole folder (#42: at 200,000 files every pass walked them all).
    func unchanged(_ watcher: DirectoryWatcher?, foreignAtScan: UInt64?, settled: Bool, now: ContinuousClock.Instant) -> Bool {
        guard let w = watcher, w.isComplete(), let at = lastFull, now - at < fullEvery, settled, unhashed == 0 else { return false }
        return w.foreignEvents() == foreignAtScan
    }

    /// The folders a scan must read again (nil for the root) over `lastWalk`, or nil when it
    /// must read everything: something moved or was removed since, a folder is unwatched, too
    /// many changed, a name is not a valid path, or the last full read is too old.
    func partial(since changes: (structural: UInt64, dirty: Set<String>), watcherComplete: Bool, now: ContinuousClock.Instant) -> [RelativePath?]? {
        guard watcherComplete, let last = lastWalk, last.structural == changes.structural, let at = lastFull, now - at < fullEvery,
              changes.dirty.count <= Self.partialLimit else { return nil }
        var dirs: [RelativePath?] = []
        for d in changes.dirty.sorted() {
            if d.isEmpty {
                dirs.append(nil)
            } else if let p = try? RelativePath(validating: d) {
                dirs.append(p)
            } else {
                return nil
            }
        }
        return dirs
    }

    /// Walks the folder for a scan — only the folders that changed, when `partial` allows —
    /// running `meanwhile` on the caller's thread as the walk runs on another, and notes the
    /// walk. The walk is not one instant: a folder moved while it ran can be seen at both
    /// places (its old place read before the move, its new one after) or at neither. Seen
    /// twice, the copy at the new place took a new ID and the item at the old place was deleted
    /// with what it held — files other devices had put in it ended in the trash. So when
    /// something moved or was removed during the walk, the whole folder is walked again; if it
    /// keeps changing, nil (the scan is dropped: the Local tree stays as the last calm walk saw
    /// it, and another follows shortly). `dirs`: the folders read again, nil for a whole walk.
    mutating func read(_ files: LocalFiles, watcher: DirectoryWatcher?, now: ContinuousClock.Instant, logger: Logger,
                       meanwhile: (_ whole: Bool) -> Void) -> (walk: LocalFiles.Scan, dirs: [RelativePath?]?)? {
        if let w = watcher, !w.isComplete() {
            // Out of watches (or refused): try again — the limit may have been raised — and say
            // so once. The walk that follows reads everything, watched or not.
            w.rewatch()
            let notice = w.notice()
            if notice != unwatchedSaid, let notice { logger.warning("\(notice)") }
            unwatchedSaid = notice
        }
        let changes = watcher?.takeChanges()
        var dirs = changes.flatMap { partial(since: $0, watcherComplete: watcher?.isComplete() == true, now: now) }
        if dirs == nil {
            logger.debug("scan: the whole folder (moves and removals \(changes.map { "\($0.structural)" } ?? "-"), at the last walk \(lastWalk.map { "\($0.structural)" } ?? "-"), \(changes?.dirty.count ?? 0) folder(s) changed)")
        }
        // The last walk is handed over whole (nothing else holds it: no copy of its tables);
        // none is kept until this walk is done and calm.
        let base = dirs == nil ? nil : lastWalk.take().map { LocalFiles.ScanHandoff($0.scan) }
        lastWalk = nil
        let walked = dirs.map { files.startScan(only: $0, over: base!) } ?? files.startScan()
        meanwhile(dirs == nil)
        var walk = walked()
        if let w = watcher, var seen = changes?.structural {
            var walks = 1
            while case let count = w.structuralEvents(), count != seen {
                guard walks < 3 else {
                    logger.debug("scan: things moved in the folder while it was read, \(walks) times; the next scan decides")
                    return nil
                }
                seen = count
                walk = files.scan()
                dirs = nil
                walks += 1
            }
            lastWalk = (walk, seen)  // exact as long as the count stays `seen`
        }
        if dirs == nil {
            lastFull = now
            fullWalks += 1
        } else {
            partialWalks += 1
        }
        return (walk, dirs)
    }

    /// The Local tree's changes when every entry a partial walk read again is an item it already
    /// has at that path with the same identity and kind (edits and attribute changes: nothing
    /// new, since nothing moved or was removed); nil otherwise (the whole folder is claimed).
    /// `check`: the files whose stamps changed (their hashes are looked at again).
    /// Entries at paths the Local tree does not have are left in `added` (see `claimNew`);
    /// `itemAt` is the Local tree's index by path.
    static func edits(_ reread: [RelativePath: LocalEntry]?, local: TrackedMap<(path: RelativePath, entry: LocalEntry)>,
                      synced: TrackedMap<SyncedEntry>, itemAt: (RelativePath) -> ItemID?,
                      added: inout [(RelativePath, LocalEntry)]) -> (changed: [ItemID: (path: RelativePath, entry: LocalEntry)], check: [ItemID])? {
        guard let reread else { return nil }
        var changed: [ItemID: (path: RelativePath, entry: LocalEntry)] = [:], check: [ItemID] = []
        for (p, e) in reread {
            guard let id = itemAt(p) else { added.append((p, e)); continue }
            guard let l = local[id], l.path == p, l.entry.kind == e.kind, l.entry.stamp.inode == e.stamp.inode else { return nil }
            noteEdit(id, l, e, synced: synced, changed: &changed, check: &check)
        }
        return (changed, check)
    }

    /// An entry of an item the Local tree has at its path: changed when its stamp moved on. As
    /// the claims of the whole folder do, a file whose stamp is not the merge base's (with its
    /// hash) is looked at; so is one whose stamp changed (its hash is the base's again, or new).
    static func noteEdit(_ id: ItemID, _ l: (path: RelativePath, entry: LocalEntry), _ e: LocalEntry, synced: TrackedMap<SyncedEntry>,
                         changed: inout [ItemID: (path: RelativePath, entry: LocalEntry)], check: inout [ItemID]) {
        if l.entry != e { changed[id] = (l.path, e) }
        if e.kind == .file, l.entry != e || synced[id].map({ $0.stamp != e.stamp || $0.stampHash == nil }) ?? true { check.append(id) }
    }

    /// The Local tree after a walk, with the files whose hashes are to be looked at (`check`)
    /// and the hashes known without looking. After a partial walk that found only edits of
    /// items the Local tree has (`edits`), just those entries change (debug builds check that
    /// the claims of the whole folder agree); otherwise the whole folder is claimed
    /// (`IdentityClaims`) and `stillNew` lists the identities of items new here, to keep.
    mutating func claim(_ walk: LocalFiles.Scan, partial: Bool, claims: () -> IdentityClaims, local: inout TrackedMap<(path: RelativePath, entry: LocalEntry)>,
                        synced: TrackedMap<SyncedEntry>, remote: TrackedMap<RemoteEntry>, facts: @autoclosure () -> NewItemFacts, newID: () -> ItemID)
        -> (result: [ItemID: (path: RelativePath, entry: LocalEntry)], check: [ItemID], hashes: [ItemID: ContentHash], stillNew: [UInt64: ItemID]?,
            new: [UInt64: ItemID]) {
        var added: [(RelativePath, LocalEntry)] = []
        if partial, var (changed, check) = Self.edits(walk.reread, local: local, synced: synced, itemAt: facts().localAt, added: &added),
           case let new = added.isEmpty ? NewClaims() : Self.claimNew(added, entries: walk.items, local: local, synced: synced, remote: remote, facts: facts(), newID: newID),
           // Every entry of the walk is an item of the Local tree (with the synced items links
           // hold): else the tree lost one the folder still has (a change the engine recorded
           // that did not happen), and the whole folder's claims find it again.
           local.count + new.claimed.count == walk.items.count + held {
            var fresh: [UInt64: ItemID] = [:]
            if !new.claimed.isEmpty { newClaims += 1 }
            for (id, c) in new.claimed {
                changed[id] = c
                if c.entry.kind == .file { check.append(id) }
                if synced[id] == nil { fresh[c.entry.stamp.inode] = id }
            }
            for (id, l) in changed { local[id] = l }
            #if DEBUG
            Self.checkAgainstWholeClaims(claims().claim(walk.items, opaque: walk.opaque, newID: newID).result, local: local, fresh: Set(new.claimed.keys),
                                         known: { synced[$0] != nil || remote[$0] != nil || facts().newLocalIDs.values.contains($0) || facts().movedTo[$0] != nil },
                                         about: { p in "synced there: \(synced.storage.filter { $0.value.node.path == p }.map { "\($0.key) \($0.value.stamp.map { String($0.inode) } ?? "-")" }), remote there: \(remote.storage.filter { $0.value.node.path == p }.map { "\($0.key)" }), index: synced \(facts().syncedAt(p).map { "\($0)" } ?? "-") remote \(facts().remoteAt(p).map { "\($0)" } ?? "-") local \(facts().localAt(p).map { "\($0)" } ?? "-"), added: \(added.map { "\($0.0)" })" })
            #endif
            return (changed, check, [:], nil, fresh)
        }
        let claimed = claims().claim(walk.items, opaque: walk.opaque, newID: newID)
        wholeClaims += 1
        let result = claimed.result
        held = result.count - walk.items.count
        // New items keep their IDs by identity while they exist; IDs of files and folders gone
        // from the folder are forgotten (an identity is never reused, but the map must not grow).
        var stillNew: [UInt64: ItemID] = [:]
        for (id, l) in result where synced[id] == nil { stillNew[l.entry.stamp.inode] = id }
        local.replace(with: result) { $0.path == $1.path && $0.entry == $1.entry }
        let check = claimed.check
        return (result, check, (consume claimed).hashes, stillNew, [:])  // the one reference left: the caller's writes copy nothing
    }

    #if DEBUG
    /// Debug builds check every partial claim against the claims of the whole folder: the same
    /// items at the same paths, but for new IDs (each side makes its own for an entry no rule
    /// gives an item: `fresh` here, unknown to the trees there).
    static func checkAgainstWholeClaims(_ whole: [ItemID: (path: RelativePath, entry: LocalEntry)], local: TrackedMap<(path: RelativePath, entry: LocalEntry)>,
                                        fresh: Set<ItemID>, known: (ItemID) -> Bool, about: (RelativePath) -> String) {
        var unmatched: [RelativePath: LocalEntry] = [:]
        // A folder's times and size decide nothing (its identity is its inode) and may differ:
        // the engine records the stamp of a folder it makes or moves, which a walk cached from
        // before has older (seen in the full suite: the same inode, an older mtime there).
        func same(_ a: LocalEntry, _ b: LocalEntry) -> Bool {
            a == b || (a.kind == .folder && b.kind == .folder && a.stamp.inode == b.stamp.inode)
        }
        for (id, l) in whole {
            if let mine = local[id], mine.path == l.path, same(mine.entry, l.entry) { continue }
            precondition(!known(id), "the claims of the changes differ from the claims of the whole folder at \(l.path): \(id) there, \(local.first { $0.value.path == l.path }.map { "\($0.key) \($0.value.entry)" } ?? "nothing") here; \(id) here: \(local[id].map { "\($0.path) \($0.entry)" } ?? "none"); entry \(l.entry); \(about(l.path))")
            unmatched[l.path] = l.entry
        }
        let mineFresh = fresh.filter { id in local[id].map { l in whole[id] == nil && unmatched[l.path].map { same($0, l.entry) } == true } ?? false }
        precondition(whole.count == local.count && mineFresh.count == unmatched.count,
                     "the claims of the changes differ from the claims of the whole folder (\(whole.count) and \(local.count) items, \(unmatched.count) new): only there \(whole.filter { local[$0.key] == nil }.map { "\($0.key) \($0.value.path) \($0.value.entry)" }), only here \(local.storage.filter { whole[$0.key] == nil }.map { "\($0.key) \($0.value.path) \($0.value.entry)" }), unmatched \(unmatched.keys.map(\.string)), \(unmatched.keys.map { about($0) })")
    }
    #endif
}
