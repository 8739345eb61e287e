import UbiqCore

/// The three trees as the planner sees them, kept between rounds: built once, then brought up
/// to date with only the items written since (a pass over 10,000 unchanged items no longer
/// copies 30,000 nodes). A map written whole (a first scan) is copied whole.
struct PlanTreeCache {
    private var trees = SyncTrees()
    /// False until the first `update`.
    private(set) var built = false

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
            return trees
        }
        if let rw { for id in rw { trees.remote[id] = remote[id]?.node } } else { trees.remote = remote.storage.mapValues(\.node) }
        if let sw { for id in sw { trees.synced[id] = synced[id]?.node } } else { trees.synced = synced.storage.mapValues(\.node) }
        if let lw, let hw {
            for id in lw.union(hw) { trees.local[id] = local[id].map { localNode(id, $0) } }
        } else {
            trees.local = localTree()
        }
        return trees
    }
}
