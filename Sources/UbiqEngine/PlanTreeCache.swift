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
    /// The Remote tree's items by path (the planner's `remoteAt`), kept with the trees: a plan
    /// for one new item used to index every item of the server first (#42).
    private(set) var remoteAt: [RelativePath: ItemID] = [:]
    /// Paths two or more Remote items share for a moment (a feed page shows one's new place
    /// before the other's move away), with all of them: when one leaves, another stays indexed.
    private var shared: [RelativePath: Set<ItemID>] = [:]

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
                let old = trees.remote[id], new = remote[id]?.node
                trees.remote[id] = new
                guard old?.path != new?.path else { continue }
                if let o = old { unindex(id, o.path) }
                if let n = new { index(id, n.path) }
            }
        } else {
            trees.remote = remote.storage.mapValues(\.node)
            reindex()
        }
        #if DEBUG
        // As an index made afresh: each path of the tree names one of its items there (two
        // items can share a path for a moment: a feed page shows one's new place before the
        // other's move away).
        precondition(remoteAt.allSatisfy { trees.remote[$0.value]?.path == $0.key } && trees.remote.values.allSatisfy { remoteAt[$0.path] != nil },
                     "the Remote tree's index by path differs from the tree")
        #endif
        if let sw { for id in sw { trees.synced[id] = synced[id]?.node } } else { trees.synced = synced.storage.mapValues(\.node) }
        let lhw = lw.flatMap { l in hw.map { l.union($0) } }
        if let lhw {
            for id in lhw { trees.local[id] = local[id].map { localNode(id, $0) } }
        } else {
            trees.local = localTree()
        }
        if let rw, let sw, let lhw {
            for id in rw.union(sw).union(lhw) {
                if Planner.isOpen(id, in: trees) { open.insert(id) } else { open.remove(id) }
            }
        } else {
            reopenAll()
        }
        return trees
    }

    private mutating func index(_ id: ItemID, _ p: RelativePath) {
        if let other = remoteAt[p], other != id { shared[p, default: [other]].insert(id) }
        remoteAt[p] = id
    }

    private mutating func unindex(_ id: ItemID, _ p: RelativePath) {
        guard var all = shared[p] else {
            if remoteAt[p] == id { remoteAt[p] = nil }
            return
        }
        all.remove(id)
        shared[p] = all.count > 1 ? all : nil
        if remoteAt[p] == id || all.count <= 1 { remoteAt[p] = all.first }
    }

    /// The index made afresh from the Remote tree.
    private mutating func reindex() {
        remoteAt = [:]
        shared = [:]
        remoteAt.reserveCapacity(trees.remote.count)
        for (id, n) in trees.remote { index(id, n.path) }
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
