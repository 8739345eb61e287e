import UbiqCore

/// One tree's items by path, kept up to date item by item as the tree changes (`moved`), so a
/// question about a path costs one lookup instead of an index of the whole tree (#42: a plan
/// or a scan for one new item indexed every item first). Two items of a tree can share a path
/// for a moment (a feed page shows one's new place before the other's move away; a file made
/// where a deleted one still stands here): the index names either, as an index made afresh
/// would, and when one leaves, the other.
struct PathIndex {
    private(set) var at: [RelativePath: ItemID] = [:]
    /// Paths two or more items share, with all of them.
    private var shared: [RelativePath: Set<ItemID>] = [:]

    subscript(_ p: RelativePath) -> ItemID? { at[p] }

    /// The index of `nodes`, made afresh.
    init<N>(_ nodes: [ItemID: N], path: (N) -> RelativePath) {
        at.reserveCapacity(nodes.count)
        for (id, n) in nodes { moved(id, from: nil, to: path(n)) }
    }

    init() {}

    /// Item `id` moved from `old` to `new` (nil: it was not in the tree, or is gone from it).
    mutating func moved(_ id: ItemID, from old: RelativePath?, to new: RelativePath?) {
        guard old != new else { return }
        if let old {
            if var all = shared[old] {
                all.remove(id)
                shared[old] = all.count > 1 ? all : nil
                if at[old] == id || all.count <= 1 { at[old] = all.first }
            } else if at[old] == id {
                at[old] = nil
            }
        }
        if let new {
            if let other = at[new], other != id { shared[new, default: [other]].insert(id) }
            at[new] = id
        }
    }

    #if DEBUG
    /// True when the index is one an index made afresh from `paths` could be: each path it
    /// holds names an item there, and every item's path is held.
    func agrees(with paths: [ItemID: RelativePath]) -> Bool {
        at.allSatisfy { paths[$0.value] == $0.key } && paths.values.allSatisfy { at[$0] != nil }
    }
    #endif
}
