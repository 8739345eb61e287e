import Dispatch
import Foundation
import UbiqCore
import UbiqProtocol

/// The engine's three trees — Remote (what the server says), Synced (the merge base), Local
/// (what the folder holds, with content hashes) — the change-feed cursor, and their writes to
/// the state database. Owned by one engine and used on its queue only; every write is noted in
/// `changeLog` (live queries re-read only what changed). Questions about items that need
/// nothing but the trees are answered here.
final class ItemTrees {
    let store: EngineStore
    /// Every write to the trees below is noted here.
    let changeLog = ChangeLog()
    var synced: TrackedMap<SyncedEntry>
    var remote: TrackedMap<RemoteEntry>
    var local: TrackedMap<(path: RelativePath, entry: LocalEntry)>
    var localHashes: TrackedMap<ContentHash>
    /// Where the change feed was read up to.
    var cursor: Int64
    /// The cursor the Remote tree stood at when the pass's current round was planned: a delete
    /// is conditional on nothing having changed after what the plan saw (`cursor` may move on
    /// while the round runs, when announced changes are pulled for downloads).
    var planCursor: Int64 = 0
    /// `.nosync` items seen by the last scan (listed as excluded, never synced).
    var excludedLocal: [RelativePath: LocalEntry] = [:]
    /// The planner's copy of the trees (see `planned()`).
    private var planTrees = PlanTreeCache()

    /// Loads the Synced and Remote trees side by side (WAL readers do not block each other).
    init(store: EngineStore) throws {
        self.store = store
        let loaded = LoadedTrees()
        DispatchQueue.concurrentPerform(iterations: 2) { i in
            if i == 0 { loaded.set(synced: Result { try store.loadSynced() }) } else { loaded.set(remote: Result { try store.loadRemote() }) }
        }
        // An item's synced and remote paths are usually equal: one string serves both (see `sharedPath`).
        var syncedEntries = try loaded.synced!.get()
        let remoteEntries = try loaded.remote!.get()
        for (id, r) in remoteEntries where syncedEntries[id]?.node.path == r.node.path { syncedEntries[id]?.node.path = r.node.path }
        self.synced = TrackedMap(syncedEntries, log: changeLog, tracksWrites: true)
        self.remote = TrackedMap(remoteEntries, log: changeLog, tracksWrites: true)
        self.local = TrackedMap(log: changeLog, tracksWrites: true)
        self.localHashes = TrackedMap(log: changeLog, tracksWrites: true)
        self.cursor = Int64(try store.meta("cursor") ?? "0") ?? 0
    }

    /// Changes made here the server does not have yet: items only this device has (new files
    /// and folders), and files whose content here is neither the merge base's nor the server's.
    /// Kept with the planner's copy (brought up to date first, O(what changed)): a status at
    /// 200,000 items looked at every item, and at 1,000,000 in a first sync at every open one
    /// (#42).
    func waitingCount() -> Int {
        _ = forPlanner()
        let n = planTrees.waiting.count
        #if DEBUG
        precondition(n == local.storage.filter { id, l in remote[id].map { waits(id, l, $0) } ?? true }.count, "the waiting items miss one")
        #endif
        return n
    }

    /// How many items have conflict versions (kept with the planner's copy, as `waitingCount`).
    func conflictCount() -> Int {
        _ = forPlanner()
        let n = planTrees.conflicted.count
        #if DEBUG
        precondition(n == remote.storage.values.filter { $0.conflictCount > 0 }.count, "the conflicted items miss one")
        #endif
        return n
    }

    /// A file here whose content is neither the merge base's nor the server's.
    private func waits(_ id: ItemID, _ l: (path: RelativePath, entry: LocalEntry), _ r: RemoteEntry) -> Bool {
        guard l.entry.kind == .file, r.node.kind == .file, let h = localHashes[id] else { return false }
        return h != synced[id]?.node.hash && h != r.node.hash
    }

    /// The planner's copy has been made (a fresh engine makes it while its first walk runs).
    var planned: Bool { planTrees.built }

    /// The three trees as the planner sees them (see `PlanTreeCache`). Callers must not keep
    /// the result, or the next update copies it whole.
    func forPlanner() -> SyncTrees {
        planTrees.update(remote: &remote, synced: &synced, local: &local, localHashes: &localHashes)
    }

    /// The items the planner may have something for, as of the last `forPlanner()`.
    var openItems: Set<ItemID> { planTrees.open }

    /// Each tree's items by path, as of the last `forPlanner()`.
    var remoteByPath: [RelativePath: ItemID] { planTrees.remoteAt.at }
    var syncedByPath: [RelativePath: ItemID] { planTrees.syncedAt.at }
    var localByPath: [RelativePath: ItemID] { planTrees.localAt.at }

    // MARK: writes

    /// The Remote tree's entry for an item the server returned (nil: deleted).
    static func remoteEntry(_ item: ItemRecord) -> RemoteEntry? {
        guard !item.isDeleted else { return nil }
        let node = RemoteNode(path: item.path, kind: item.kind, version: item.current?.id, hash: item.current?.hash,
                              size: item.current?.size ?? 0, uploaded: item.current?.uploaded ?? true)
        return RemoteEntry(node: node, conflictCount: item.conflictCount, modified: item.current?.modified, deviceName: item.current?.deviceName,
                           created: item.created, permissions: item.current?.permissions, generation: item.current?.generation)
    }

    /// Applies a page of the change feed and moves the cursor past it (one transaction);
    /// `gone` are items to take as deleted besides.
    func apply(page items: [ItemRecord], cursor next: Int64, gone: [ItemID] = []) throws {
        var changes: [(ItemID, RemoteEntry?)] = []
        for item in items {
            try RollbackCheck.check(item, against: remote[item.id])
            // Excluded names never come from a well-behaved server; never materialise them.
            changes.append((item.id, item.path.isExcluded ? nil : Self.remoteEntry(item)))
        }
        changes += gone.map { ($0, nil) }
        try store.applyRemote(changes, cursor: next)
        for (id, var e) in changes {
            if let p = e?.node.path { e?.node.path = sharedPath(id, p) }
            remote[id] = e
        }
        cursor = next
    }

    /// Replaces the Remote tree with the server's whole feed (read from 0 after `cursor_expired`:
    /// the server forgot deletes this device had not heard of). What the feed no longer lists
    /// is gone from the server, as a delete would have said; the planner takes it as one (an
    /// edit made here meanwhile still wins over it). One transaction, like a page.
    func replaceRemote(with items: [ItemRecord], cursor next: Int64) throws {
        let listed = Set(items.map(\.id))
        let gone = remote.keys.filter { !listed.contains($0) }
        try apply(page: items, cursor: next, gone: Array(gone))
    }

    /// Records an item the server just returned (after this device's own request).
    func noteRemote(_ item: ItemRecord) {
        let e = Self.remoteEntry(item)
        remote[item.id] = e
        try? store.applyRemote([(item.id, e)], cursor: nil)
    }

    /// The server deleted a folder's contents with it (everything live under `path`): so does
    /// the Remote tree.
    func forgetRemoteContents(of id: ItemID, under path: RelativePath) throws {
        let gone = remote.filter { $0.key != id && $0.value.node.path != path && $0.value.node.path.isSelfOrDescendant(of: path) }.map(\.key)
        guard !gone.isEmpty else { return }
        for k in gone { remote[k] = nil }
        try store.applyRemote(gone.map { ($0, nil) }, cursor: nil)
    }

    /// The server moved a folder's contents with it (from `old` to `new`): so does the Remote tree.
    func moveRemoteContents(of id: ItemID, from old: RelativePath, to new: RelativePath) throws {
        var moved: [(ItemID, RemoteEntry?)] = []
        for (k, r) in remote where k != id && r.node.path.isSelfOrDescendant(of: old) {
            var e = r
            e.node.path = r.node.path.rebased(from: old, to: new)
            remote[k] = e
            moved.append((k, e))
        }
        try store.applyRemote(moved, cursor: nil)
    }

    func setSynced(_ id: ItemID, _ e: SyncedEntry?) throws {
        synced[id] = e
        try store.setSynced(id, e)
    }

    /// Moves an item's merge base (and, for a folder, its descendants') to a new path.
    func rebaseSynced(_ id: ItemID, from old: RelativePath, to new: RelativePath) throws {
        var changes: [(ItemID, SyncedEntry?)] = []
        for (k, s) in synced where k == id || (s.node.path.isSelfOrDescendant(of: old) && s.node.path != old) {
            var e = s
            e.node.path = k == id ? new : s.node.path.rebased(from: old, to: new)
            synced[k] = e
            changes.append((k, e))
        }
        try store.setManySynced(changes)
    }

    /// The local item now answers to `new` (the server merged it with an item at the same path).
    /// Returns its entry, or nil when there is nothing to move.
    func adopt(_ old: ItemID, as new: ItemID) -> (path: RelativePath, entry: LocalEntry)? {
        guard old != new, let l = local[old] else { return nil }
        local[new] = l
        local[old] = nil
        localHashes[new] = localHashes[old]
        localHashes[old] = nil
        return l
    }

    // MARK: questions

    /// `path`, or an equal path the item's other trees already hold (see `IdentityClaims`).
    func sharedPath(_ id: ItemID, _ path: RelativePath) -> RelativePath {
        IdentityClaims.sharedPath(path, synced: synced[id]?.node.path, remote: remote[id]?.node.path)
    }

    /// Where an item is: here, else on the server, else where it was last synced.
    func path(of id: ItemID) -> RelativePath? { local[id]?.path ?? remote[id]?.node.path ?? synced[id]?.node.path }

    /// The item at a path (listed by the server or only local).
    func itemID(at path: RelativePath) -> ItemID? {
        _ = forPlanner()  // the indexes by path as of now (O(what changed); it read every item)
        let id = planTrees.localAt[path] ?? planTrees.remoteAt[path]
        #if DEBUG
        precondition((id == nil) == (local.first { $0.value.path == path } == nil && remote.first { $0.value.node.path == path } == nil),
                     "the indexes by path disagree with the trees at \(path)")
        #endif
        return id
    }

    /// Items at or under a path (a folder names everything inside it). A file — what most
    /// commands name — is answered from the indexes by path (O(1)); a folder reads every item.
    func items(under path: RelativePath) -> [ItemID] {
        func everyItem() -> [ItemID] {
            var ids = Set<ItemID>()
            for (id, l) in local where l.path.isSelfOrDescendant(of: path) { ids.insert(id) }
            for (id, r) in remote where r.node.path.isSelfOrDescendant(of: path) { ids.insert(id) }
            return ids.sorted()
        }
        guard let file = file(at: path) else { return everyItem() }
        #if DEBUG
        precondition(file == everyItem(), "the indexes by path answer \(file) for the items at \(path), the trees \(everyItem())")
        #endif
        return file
    }

    /// The items at `path` when every tree that has something there has a file (nothing can be
    /// under it); nil when either names a folder, nothing, or an item no longer at that path.
    private func file(at path: RelativePath) -> [ItemID]? {
        _ = forPlanner()  // the indexes by path as of now (O(what changed))
        let l = planTrees.localAt[path], r = planTrees.remoteAt[path]
        guard l != nil || r != nil else { return nil }
        if let l { guard let e = local[l], e.path == path, e.entry.kind == .file else { return nil } }
        if let r { guard let e = remote[r], e.node.path == path, e.node.kind == .file else { return nil } }
        return Set([l, r].compactMap { $0 }).sorted()
    }

    /// True when any tree knows the item.
    func knows(_ id: ItemID) -> Bool { remote[id] != nil || local[id] != nil || synced[id] != nil }

    /// The IDs of this device's folders at these paths: the `parent` a new item is committed
    /// into (the server refuses it when it has another folder there, or moved that one away).
    func localFolders(at paths: Set<RelativePath>) -> [RelativePath: ItemID] {
        guard !paths.isEmpty else { return [:] }
        _ = forPlanner()  // the index by path as of now (O(what changed); every item was read, ~50 ms at 1,000,000)
        var out: [RelativePath: ItemID] = [:]
        for p in paths {
            guard let id = planTrees.localAt[p] else { continue }  // nothing here is at `p`
            if let l = local[id], l.path == p, l.entry.kind == .folder {
                out[p] = id
            } else if let other = local.first(where: { $0.value.entry.kind == .folder && $0.value.path == p })?.key {
                out[p] = other  // two items at one path for a moment, the index naming the other: rare
            }
        }
        #if DEBUG
        var all: [RelativePath: ItemID] = [:]
        for (id, l) in local where l.entry.kind == .folder && paths.contains(l.path) { all[l.path] = id }
        precondition(Set(all.keys) == Set(out.keys), "the index by path misses a folder at \(Set(all.keys).subtracting(out.keys))")
        #endif
        return out
    }

    /// The `parent` of a commit of this item at `path`: only for an item new to the server.
    func commitParent(_ id: ItemID, _ path: RelativePath) -> ItemID? {
        guard remote[id] == nil, let parent = path.parent else { return nil }
        return localFolders(at: [parent])[parent]
    }

    /// A synced folder at `path` (one the user may just have moved or deleted here).
    func hasSyncedFolder(at path: RelativePath) -> Bool {
        func everyItem() -> Bool { synced.values.contains { $0.node.kind == .folder && $0.node.path == path } }
        _ = forPlanner()  // the index by path as of now (O(what changed); every item was read)
        let found: Bool
        if let id = planTrees.syncedAt[path] {
            // Two items at one path for a moment, the index naming the other: rare.
            found = synced[id].map { $0.node.path == path && $0.node.kind == .folder } == true || everyItem()
        } else {
            found = false  // nothing synced is at `path`
        }
        #if DEBUG
        precondition(found == everyItem(), "the index by path answers \(found) for a synced folder at \(path)")
        #endif
        return found
    }

    /// What each tree says about the items at (or once at) `path`, one line each; `more` adds
    /// what else the engine knows of an item.
    func diagnose(_ path: String, more: (ItemID) -> String) -> String {
        var ids: Set<ItemID> = []
        for (id, r) in remote where r.node.path.string == path { ids.insert(id) }
        for (id, s) in synced where s.node.path.string == path { ids.insert(id) }
        for (id, l) in local where l.path.string == path { ids.insert(id) }
        if ids.isEmpty { return "\(path): no item in any tree" }
        func short(_ v: VersionID?) -> String { v.map { String($0.description.suffix(6)) } ?? "-" }
        func short(_ h: ContentHash?) -> String { h.map { String($0.hex.prefix(8)) } ?? "-" }
        return ids.sorted().map { id in
            let r = remote[id].map { "\($0.node.kind) \($0.node.path) v\(short($0.node.version)) h\(short($0.node.hash))\($0.node.uploaded ? "" : " uploading")" } ?? "none"
            let s = synced[id].map { "\($0.node.kind) \($0.node.path) v\(short($0.node.version)) h\(short($0.node.hash))\($0.node.conflictHash.map { " conflict \(short($0))" } ?? "")" } ?? "none"
            let l = local[id].map { "\($0.entry.kind) \($0.path) h\(short(localHashes[id]))" } ?? "none"
            return "\(id): remote \(r) | synced \(s) | local \(l)\(more(id))"
        }.joined(separator: "\n")
    }
}
