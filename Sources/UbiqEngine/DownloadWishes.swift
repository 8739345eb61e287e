import UbiqCore

/// What the user asked of items' content: pinned (kept downloaded on an on-demand device, new
/// versions fetched as they come) or evicted (dropped on request and not fetched again until
/// asked). Each change is written to the state database before it is taken.
final class DownloadWishes {
    let store: EngineStore
    private(set) var pinned: Set<ItemID>
    private(set) var evicted: Set<ItemID>

    init(store: EngineStore) throws {
        self.store = store
        (pinned, evicted) = try store.loadWanted()
    }

    /// The content of `ids` is wanted (`download`): no longer evicted, and pinned when `pin`.
    func want(_ ids: [ItemID], pin: Bool) throws {
        try store.setWanted(ids, pin ? "pinned" : nil)
        if pin { pinned.formUnion(ids) } else { pinned.subtract(ids) }
        evicted.subtract(ids)
    }

    /// Pins or unpins `ids` (an unpinned item stays as it is; it is simply no longer kept).
    func setPinned(_ ids: [ItemID], _ on: Bool) throws {
        try store.setWanted(ids, on ? "pinned" : nil)
        if on { pinned.formUnion(ids); evicted.subtract(ids) } else { pinned.subtract(ids) }
    }

    /// The content of `ids` is dropped on request; with `dropSynced` their merge bases and
    /// chunk indexes go in the same transaction (the file is about to be removed).
    func evict(_ ids: [ItemID], dropSynced: Bool = false) throws {
        try store.setWanted(ids, "evicted", dropSynced: dropSynced)
        evicted.formUnion(ids)
        pinned.subtract(ids)
    }

    /// Drops eviction marks that no longer apply (`stale`: the item has local content again,
    /// or is gone from the server).
    func forgetEvictions(where stale: (ItemID) -> Bool) throws {
        let gone = evicted.filter(stale)
        guard !gone.isEmpty else { return }
        try store.setWanted(Array(gone), nil)
        evicted.subtract(gone)
    }

    /// The paths of pinned folders (the server's).
    func pinnedFolderPaths(remote: TrackedMap<RemoteEntry>) -> [RelativePath] {
        pinned.compactMap { id in remote[id].flatMap { $0.node.kind == .folder ? $0.node.path : nil } }
    }
}
