import UbiqCore

/// Which item each entry of a scan of the folder is: the identity rules of the Local tree, as
/// a pure function of what was seen and what is known (the synced and remote trees, the IDs
/// given to new items earlier). No file system, no clock: a new ID comes from `newID`.
///
/// 1. An entry with a synced item's inode (inode number mixed with birth time) and kind is
///    that item, perhaps renamed or moved; hard links are decided in path order.
/// 2. A synced file renamed over another synced file (an atomic save whose temporary file
///    was synced) keeps the document's identity; so does one renamed to where this device
///    moved a document whose move's answer it has not heard.
/// 3. Else: the synced item at the same path and of the same kind, then the one at the path
///    the entry had before the folders above it moved (a folder renamed and a file in it saved
///    atomically before the engine looked), then the item this device moved to the path whose
///    answer it has not heard (the server may not say so yet), then an ID given to this inode
///    earlier, then a remote item at the path (never synced here, or moved there on the server
///    while its file here is gone from its synced place), else a new ID.
/// 4. A synced item at or under a path held by a symbolic link (or a socket, a device) is left
///    as it was: never taken for a deletion.
/// An ID is never given to two entries, nor to an entry of another kind than its item's.
struct IdentityClaims {
    let synced: [ItemID: SyncedEntry]
    let remote: [ItemID: RemoteEntry]
    let newLocalIDs: [UInt64: ItemID]
    /// Items this device moved whose answers it has not heard, by where they were sent.
    let movedTo: [RelativePath: ItemID]
    /// Synced items by inode (built before the walk's result is waited for).
    let syncedByInode: [UInt64: ItemID]

    /// What a scan's entries are.
    struct Claimed {
        /// Each entry under its item's ID.
        var result: [ItemID: (path: RelativePath, entry: LocalEntry)]
        /// The content hashes known without reading (the synced one for an unchanged stamp).
        var hashes: [ItemID: ContentHash]
        /// Files whose hash must be looked at (stamp changed, or new).
        var check: [ItemID]
    }

    /// `movedTo`: moves this device sent whose answers it has not heard (item → where to).
    init(synced: [ItemID: SyncedEntry], remote: [ItemID: RemoteEntry], newLocalIDs: [UInt64: ItemID], movedTo: [ItemID: RelativePath] = [:]) {
        self.synced = synced; self.remote = remote; self.newLocalIDs = newLocalIDs
        var moved: [RelativePath: ItemID] = [:]
        for (id, to) in movedTo { moved[to] = id }
        self.movedTo = moved
        var byInode: [UInt64: ItemID] = [:]
        byInode.reserveCapacity(synced.count)
        for (id, s) in synced { if let st = s.stamp { byInode[st.inode] = id } }
        syncedByInode = byInode
    }

    /// True when `p` or one of its ancestors is in `paths`.
    static func isAtOrUnder(_ p: RelativePath, _ paths: Set<RelativePath>) -> Bool {
        var a: RelativePath? = p
        while let x = a {
            if paths.contains(x) { return true }
            a = x.parent
        }
        return false
    }

    /// `path`, or an equal path the item's other trees already hold (one string shared by the
    /// planner's three nodes of an item: at 10,000 items, touching three was most of a plan).
    func sharedPath(_ id: ItemID, _ path: RelativePath) -> RelativePath {
        Self.sharedPath(path, synced: synced[id]?.node.path, remote: remote[id]?.node.path)
    }

    /// `path`, or the equal one of `synced` and `remote`.
    static func sharedPath(_ path: RelativePath, synced: RelativePath?, remote: RelativePath?) -> RelativePath {
        if let p = synced, p == path { return p }
        if let p = remote, p == path { return p }
        return path
    }

    /// The synced path an entry at `p` had before folders above it were moved (a folder renamed,
    /// and a file in it saved atomically, before the engine looked: neither inode nor path
    /// matches); nil when the nearest claimed folder above it did not move. `folders`: claimed
    /// folders by their path now.
    static func pathBeforeFolderMoves(_ p: RelativePath, folders: [RelativePath: ItemID], synced: [ItemID: SyncedEntry]) -> RelativePath? {
        pathBeforeFolderMoves(p, folderAt: { folders[$0] }, syncedPath: { synced[$0]?.node.path })
    }

    /// `pathBeforeFolderMoves(_:folders:synced:)` with lookups in place of the maps.
    static func pathBeforeFolderMoves(_ p: RelativePath, folderAt: (RelativePath) -> ItemID?, syncedPath: (ItemID) -> RelativePath?) -> RelativePath? {
        var a = p.parent
        while let ancestor = a {
            if let f = folderAt(ancestor), let sp = syncedPath(f) {
                return sp == ancestor ? nil : p.rebased(from: ancestor, to: sp)
            }
            a = ancestor.parent
        }
        return nil
    }

    /// Claims every entry of a walk (`opaque`: paths held by links and the like).
    func claim(_ entries: [RelativePath: LocalEntry], opaque: Set<RelativePath>, newID: () -> ItemID) -> Claimed {
        // An item is claimed once it has an entry in `result`.
        var result: [ItemID: (path: RelativePath, entry: LocalEntry)] = [:]
        result.reserveCapacity(entries.count)

        var unassigned: [(RelativePath, LocalEntry)] = []
        // Hashes: the synced one when the stamp is unchanged (nearly every file at start-up);
        // the files listed in `check` are looked at after the claims.
        var hashes: [ItemID: ContentHash] = [:]
        hashes.reserveCapacity(entries.count)
        var check: [ItemID] = []
        // 1. Same inode as a synced item: the same item (perhaps renamed or moved). Where it also
        //    has the synced path (nearly always) no other entry can claim that item, so those are
        //    taken in any order; the rest go in path order, so hard links decide the same way
        //    every time.
        var moved: [(key: RelativePath, value: LocalEntry)] = []
        for (path, e) in entries {
            if let id = syncedByInode[e.stamp.inode], let s = synced[id], s.node.kind == e.kind, s.node.path == path {
                result[id] = (s.node.path, e)
                if e.kind == .file {
                    if s.stamp == e.stamp, let h = s.stampHash { hashes[id] = h } else { check.append(id) }
                }
            } else {
                moved.append((path, e))
            }
        }
        // A synced file renamed over another synced file (an editor's atomic save whose temporary
        // file was synced before the rename): the document keeps its identity and takes the new
        // content; the temporary item is gone.
        var replaced: [RelativePath: ItemID] = [:]
        if !moved.isEmpty {
            var syncedFileAt: [RelativePath: ItemID] = [:]
            for (id, s) in synced where s.node.kind == .file { syncedFileAt[s.node.path] = id }
            var present: Set<UInt64>?
            for (path, e) in moved where e.kind == .file {
                guard let doc = syncedFileAt[path] ?? movedTo[path], let tid = syncedByInode[e.stamp.inode], tid != doc, result[doc] == nil,
                      synced[tid]?.node.kind == .file, let docInode = synced[doc]?.stamp?.inode else { continue }
                if present == nil { present = Set(entries.values.map(\.stamp.inode)) }
                if !present!.contains(docInode) { replaced[path] = doc }  // the document's own file is gone, not moved
            }
        }
        for (path, e) in moved.sorted(by: { $0.key < $1.key }) {
            if let doc = replaced[path], result[doc] == nil {
                result[doc] = (sharedPath(doc, path), e)
                check.append(doc)
            } else if let id = syncedByInode[e.stamp.inode], let s = synced[id], s.node.kind == e.kind, result[id] == nil,
               s.node.path == path || entries[s.node.path]?.stamp.inode != e.stamp.inode {
                result[id] = (sharedPath(id, path), e)
                if e.kind == .file { check.append(id) }
            } else {
                unassigned.append((path, e))
            }
        }
        // 2. Same path as a synced item (content replaced, e.g. an editor's atomic save), then
        //    IDs given earlier to new items, then a server item at the same path, else a new ID.
        var syncedByPath: [RelativePath: ItemID] = [:], remoteByPath: [RelativePath: ItemID] = [:]
        if !unassigned.isEmpty {
            syncedByPath.reserveCapacity(synced.count); remoteByPath.reserveCapacity(remote.count)
            for (id, s) in synced { syncedByPath[s.node.path] = id }
            for (id, r) in remote { remoteByPath[r.node.path] = id }
        }
        // Folders claimed so far, by path (for `pathBeforeFolderMoves`).
        var claimedFolderAt: [RelativePath: ItemID] = [:]
        if !unassigned.isEmpty { for (id, c) in result where c.entry.kind == .folder { claimedFolderAt[c.path] = id } }
        for (path, e) in unassigned {
            var id: ItemID
            let before = syncedByPath[path] == nil ? Self.pathBeforeFolderMoves(path, folders: claimedFolderAt, synced: synced) : nil
            if let sid = syncedByPath[path], synced[sid]!.node.kind == e.kind, result[sid] == nil {
                id = sid
            } else if let before, let sid = syncedByPath[before], synced[sid]!.node.kind == e.kind, result[sid] == nil, entries[before] == nil {
                id = sid
            } else if let mid = movedTo[path] ?? before.flatMap({ movedTo[$0] }), let s = synced[mid], s.node.kind == e.kind, result[mid] == nil, entries[s.node.path] == nil {
                // This device's own move whose answer is not heard yet (the server's listing may
                // still have it at its old place), its file saved atomically at the new place —
                // even when the temporary file was seen (and given an ID) before its rename.
                id = mid
            } else if let nid = newLocalIDs[e.stamp.inode], result[nid] == nil, (remote[nid]?.node.kind ?? synced[nid]?.node.kind) ?? e.kind == e.kind {
                id = nid
            } else if let rid = remoteByPath[path] ?? before.flatMap({ remoteByPath[$0] }), remote[rid]!.node.kind == e.kind, result[rid] == nil,
                      synced[rid].map({ $0.node.path != path && entries[$0.node.path] == nil }) ?? true {
                // A server item at this path: one never synced here, or one the server moved here
                // (this device's own move whose answer was lost, or another device's) whose file is
                // gone from its old place here: the file saved at its new place is that item.
                id = rid
            } else {
                id = newID()
            }
            result[id] = (sharedPath(id, path), e)
            if e.kind == .file { check.append(id) }
        }
        // 3. A synced item at or under a path held by a symbolic link (or a socket, a device) is
        //    left as it was: not followed, not synced, and never taken for a deletion.
        if !opaque.isEmpty {
            for (id, s) in synced where result[id] == nil {
                guard let stamp = s.stamp, s.node.kind == .folder || s.stampHash != nil, Self.isAtOrUnder(s.node.path, opaque) else { continue }
                result[id] = (s.node.path, LocalEntry(kind: s.node.kind, stamp: stamp))
                if s.node.kind == .file { check.append(id) }
            }
        }
        return Claimed(result: result, hashes: hashes, check: check)
    }
}
