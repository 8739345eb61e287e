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
    /// Items with changes here the server does not have yet (`ItemTrees.waitingCount`) and items
    /// with conflict versions: kept with the trees, so a `status` — asked every second by the
    /// front end, every 200 ms by the benchmarks — counts them without reading every item (#42:
    /// at 1,000,000 items a status read all of them, twice).
    private(set) var waiting: Set<ItemID> = [], conflicted: Set<ItemID> = []

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
            recount(remote: remote)
            return trees
        }
        Self.take(rw, into: &trees.remote, index: &remoteAt, node: { remote[$0]?.node }, all: { remote.storage.mapValues(\.node) })
        Self.take(sw, into: &trees.synced, index: &syncedAt, node: { synced[$0]?.node }, all: { synced.storage.mapValues(\.node) })
        let lhw = lw.flatMap { l in hw.map { l.union($0) } }
        Self.take(lhw, into: &trees.local, index: &localAt, node: { id in local[id].map { localNode(id, $0) } }, all: localTree)
        #if DEBUG
        precondition(remoteAt.agrees(with: trees.remote.mapValues(\.path)) && syncedAt.agrees(with: trees.synced.mapValues(\.path))
                     && localAt.agrees(with: trees.local.mapValues(\.path)), "a tree's index by path differs from the tree")
        #endif
        if let rw, let sw, let lhw {
            for id in rw.union(sw).union(lhw) {
                if Planner.isOpen(id, in: trees) { open.insert(id) } else { open.remove(id) }
                count(id, remote: remote[id])
            }
        } else {
            reopenAll()
            recount(remote: remote)
        }
        return trees
    }

    /// A file here whose content is neither the merge base's nor the server's, or an item only
    /// this device has.
    static func waits(_ id: ItemID, in t: SyncTrees) -> Bool {
        guard let l = t.local[id] else { return false }
        guard let r = t.remote[id] else { return true }
        guard l.kind == .file, r.kind == .file, let h = l.hash else { return false }
        return h != t.synced[id]?.hash && h != r.hash
    }

    private mutating func count(_ id: ItemID, remote r: RemoteEntry?) {
        if Self.waits(id, in: trees) { waiting.insert(id) } else { waiting.remove(id) }
        if (r?.conflictCount ?? 0) > 0 { conflicted.insert(id) } else { conflicted.remove(id) }
    }

    /// Both counts afresh (a tree was written whole).
    private mutating func recount(remote: TrackedMap<RemoteEntry>) {
        let t = trees
        waiting = Set(t.local.keys.filter { Self.waits($0, in: t) })
        conflicted = Set(remote.storage.lazy.filter { $0.value.conflictCount > 0 }.map(\.key))
    }

    /// One planner tree brought up to date with its map's written items (nil: written whole),
    /// its index by path with it.
    private static func take<N: PathNode>(_ written: Set<ItemID>?, into nodes: inout [ItemID: N], index: inout PathIndex,
                                          node: (ItemID) -> N?, all: () -> [ItemID: N]) {
        guard let written else {
            nodes = all()
            index = PathIndex(nodes, path: \.path)
            return
        }
        for id in written {
            let old = nodes[id]?.path
            nodes[id] = node(id)
            index.moved(id, from: old, to: nodes[id]?.path)
        }
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

/// A planner tree's node: it has a path.
protocol PathNode { var path: RelativePath { get } }
extension RemoteNode: PathNode {}
extension SyncedNode: PathNode {}
extension LocalNode: PathNode {}
