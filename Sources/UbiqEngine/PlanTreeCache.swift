import UbiqCore

/// The three trees as the planner sees them, kept between rounds: built once, then brought up
/// to date with only the items written since (a pass over 10,000 unchanged items no longer
/// copies 30,000 nodes). A map written whole (a first scan) is copied whole.
struct PlanTreeCache {
    private var trees = SyncTrees()
    /// False until the first `update`.
    private(set) var built = false
    /// The items the planner may have something for (`Planner.isOpen`): kept with the trees,
    /// so a plan looks at what changed and what still waits, not at every item.
    private(set) var open: Set<ItemID> = []
    /// Each tree's items by path (the planner's `remoteAt`, `localAt`, `syncedAt`; the claims
    /// of new entries), kept with the trees (#42).
    private(set) var remoteAt = PathIndex(), localAt = PathIndex(), syncedAt = PathIndex()

    /// The trees as of the maps now; takes the maps' written sets.
    mutating func update(remote: inout TrackedMap<RemoteEntry>, synced: inout TrackedMap<SyncedEntry>,
                         local: inout TrackedMap<(path: RelativePath, entry: LocalEntry)>, localHashes: inout TrackedMap<ContentHash>) -> SyncTrees {
        func localNode(_ id: ItemID, _ l: (path: RelativePath, entry: LocalEntry)) -> LocalNode {
            LocalNode(path: l.path, kind: l.entry.kind, hash: l.entry.kind == .file ? localHashes[id] : nil)
        }
        func localTree() -> [ItemID: LocalNode] {
            var out: [ItemID: LocalNode] = [:]
            out.reserveCapacity(local.count)
            for (id, l) in local { out[id] = localNode(id, l) }
            return out
        }
        let rw = remote.takeWritten(), sw = synced.takeWritten(), lw = local.takeWritten(), hw = localHashes.takeWritten()
        guard built else {
            trees = SyncTrees(remote: remote.storage.mapValues(\.node), local: localTree(), synced: synced.storage.mapValues(\.node))
            built = true
            reopenAll()
            reindex()
            return trees
        }
        if let rw {
            for id in rw {
                let old = trees.remote[id]?.path
                trees.remote[id] = remote[id]?.node
                remoteAt.moved(id, from: old, to: trees.remote[id]?.path)
            }
        } else {
            trees.remote = remote.storage.mapValues(\.node)
            remoteAt = PathIndex(trees.remote, path: \.path)
        }
        if let sw {
            for id in sw {
                let old = trees.synced[id]?.path
                trees.synced[id] = synced[id]?.node
                syncedAt.moved(id, from: old, to: trees.synced[id]?.path)
            }
        } else {
            trees.synced = synced.storage.mapValues(\.node)
            syncedAt = PathIndex(trees.synced, path: \.path)
        }
        let lhw = lw.flatMap { l in hw.map { l.union($0) } }
        if let lhw {
            for id in lhw {
                let old = trees.local[id]?.path
                trees.local[id] = local[id].map { localNode(id, $0) }
                localAt.moved(id, from: old, to: trees.local[id]?.path)
            }
        } else {
            trees.local = localTree()
            localAt = PathIndex(trees.local, path: \.path)
        }
        #if DEBUG
        precondition(remoteAt.agrees(with: trees.remote.mapValues(\.path)) && syncedAt.agrees(with: trees.synced.mapValues(\.path))
                     && localAt.agrees(with: trees.local.mapValues(\.path)), "a tree's index by path differs from the tree")
        #endif
        if let rw, let sw, let lhw {
            for id in rw.union(sw).union(lhw) {
                if Planner.isOpen(id, in: trees) { open.insert(id) } else { open.remove(id) }
            }
        } else {
            reopenAll()
        }
        return trees
    }

    /// The indexes made afresh from the trees.
    private mutating func reindex() {
        remoteAt = PathIndex(trees.remote, path: \.path)
        syncedAt = PathIndex(trees.synced, path: \.path)
        localAt = PathIndex(trees.local, path: \.path)
    }

    /// Looks at every item again (a tree was written whole).
    private mutating func reopenAll() {
        var all: Set<ItemID> = []
        for id in trees.remote.keys where Planner.isOpen(id, in: trees) { all.insert(id) }
        for id in trees.local.keys where trees.remote[id] == nil { all.insert(id) }
        for id in trees.synced.keys where trees.remote[id] == nil && trees.local[id] == nil { all.insert(id) }
        open = all
    }
}
