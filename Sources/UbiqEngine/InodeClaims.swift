import UbiqCore

/// The IDs new items claimed, by inode, before their commits went out: a commit whose answer is
/// lost (or an engine stopped before it) never has to be answered for the file to keep its ID.
/// A claim lasts until its item is synced or gone. Kept as text in the state database.
struct InodeClaims: Equatable {
    private(set) var byInode: [UInt64: ItemID]

    init(_ byInode: [UInt64: ItemID] = [:]) { self.byInode = byInode }

    /// Reads the stored text; what cannot be read is skipped.
    init(text: String?) {
        var out: [UInt64: ItemID] = [:]
        for part in (text ?? "").split(separator: ",") {
            let kv = part.split(separator: ":", maxSplits: 1)
            if kv.count == 2, let inode = UInt64(kv[0]), let id = ItemID(string: String(kv[1])) { out[inode] = id }
        }
        byInode = out
    }

    /// The stored text (nil when there is no claim).
    var text: String? { byInode.isEmpty ? nil : byInode.map { "\($0.key):\($0.value)" }.sorted().joined(separator: ",") }

    /// Claims `ids` (not yet synced) by their inodes, first dropping the claims of items synced
    /// since (their commits were answered), so the claims stay as few as the commits in
    /// flight. True if anything changed.
    mutating func claim(_ ids: [ItemID], synced: (ItemID) -> Bool, inode: (ItemID) -> UInt64?) -> Bool {
        let before = byInode.count
        byInode = byInode.filter { !synced($0.value) }
        var changed = byInode.count != before
        for id in ids where !synced(id) {
            guard let i = inode(id), byInode[i] != id else { continue }
            byInode[i] = id
            changed = true
        }
        return changed
    }

    /// Keeps only the claims a scan still found new (`stillNew`: inode → ID). True if any went.
    mutating func prune(keeping stillNew: [UInt64: ItemID]) -> Bool {
        let kept = byInode.filter { stillNew[$0.key] == $0.value }
        defer { byInode = kept }
        return kept.count != byInode.count
    }
}
