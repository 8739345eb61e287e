import UbiqCore

/// The claims of entries a partial walk found at paths the last claims did not have — files
/// and folders created since (#42: one new file at 200,000 claimed the whole folder again, over
/// a second). A partial walk follows only changes that moved and removed nothing, so of the
/// identity rules (`IdentityClaims`) only the third can apply to a new entry: the synced item
/// at its path (or where it was before folders above it moved), this device's own move there,
/// an ID given to its inode before, a server item at its path, else a new ID. Each is looked
/// up for just the new paths in the trees' indexes by path (`PathIndex`, kept with the
/// planner's trees): O(new entries).
extension FolderScans {
    /// What the rules need besides the trees.
    struct NewItemFacts {
        /// IDs given to new items earlier, by inode (`ItemIdentity.newLocalIDs`).
        let newLocalIDs: [UInt64: ItemID]
        /// Moves this device sent whose answers it has not heard (item → where to).
        let movedTo: [ItemID: RelativePath]
        /// Each tree's item at a path (the Local tree as it was before this walk).
        let localAt: (RelativePath) -> ItemID?, syncedAt: (RelativePath) -> ItemID?, remoteAt: (RelativePath) -> ItemID?
    }

    /// What the claims of the new entries found: each entry under its item.
    struct NewClaims {
        var claimed: [ItemID: (path: RelativePath, entry: LocalEntry)] = [:]
    }

    /// Claims `added` (entries at paths the Local tree does not have) in path order, as the
    /// claims of the whole folder `entries` would.
    static func claimNew(_ added: [(RelativePath, LocalEntry)], entries: [RelativePath: LocalEntry], local: TrackedMap<(path: RelativePath, entry: LocalEntry)>,
                         synced: TrackedMap<SyncedEntry>, remote: TrackedMap<RemoteEntry>, facts: NewItemFacts, newID: () -> ItemID) -> NewClaims {
        let fresh = added.sorted { $0.0 < $1.0 }
        let localAt = facts.localAt
        var out = NewClaims()
        // Where each was before folders above it moved: folders the Local tree has (the whole
        // folder's claims look at the folders claimed before the new entries, not at new ones).
        var before: [RelativePath: RelativePath] = [:]
        for (p, _) in fresh {
            if let b = IdentityClaims.pathBeforeFolderMoves(p, folderAt: { localAt($0).flatMap { local[$0]?.entry.kind == .folder ? $0 : nil } },
                                                            syncedPath: { synced[$0]?.node.path }) { before[p] = b }
        }
        let syncedAt = facts.syncedAt, remoteAt = facts.remoteAt
        var movedTo: [RelativePath: ItemID] = [:]
        for (id, to) in facts.movedTo { movedTo[to] = id }
        var taken = Set<ItemID>()
        func free(_ id: ItemID) -> Bool { local[id] == nil && !taken.contains(id) }

        for (path, e) in fresh {
            // As `IdentityClaims.claim` decides an unassigned entry (its `before` is looked up
            // only when no synced item is at the path).
            let b = syncedAt(path) == nil ? before[path] : nil
            var id: ItemID
            if let sid = syncedAt(path), synced[sid]!.node.kind == e.kind, free(sid) {
                id = sid
            } else if let b, let sid = syncedAt(b), synced[sid]!.node.kind == e.kind, free(sid), entries[b] == nil {
                id = sid
            } else if let mid = movedTo[path] ?? b.flatMap({ movedTo[$0] }), let s = synced[mid], s.node.kind == e.kind, free(mid), entries[s.node.path] == nil {
                id = mid
            } else if let nid = facts.newLocalIDs[e.stamp.inode], free(nid), (remote[nid]?.node.kind ?? synced[nid]?.node.kind) ?? e.kind == e.kind {
                id = nid
            } else if let rid = remoteAt(path) ?? b.flatMap(remoteAt), remote[rid]!.node.kind == e.kind, free(rid),
                      synced[rid].map({ $0.node.path != path && entries[$0.node.path] == nil }) ?? true {
                id = rid
            } else {
                id = newID()
            }
            taken.insert(id)
            out.claimed[id] = (IdentityClaims.sharedPath(path, synced: synced[id]?.node.path, remote: remote[id]?.node.path), e)
        }
        return out
    }
}
