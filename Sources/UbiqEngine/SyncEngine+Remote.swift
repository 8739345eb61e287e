import Foundation
import UbiqCore
import UbiqProtocol

extension SyncEngine {
    static func remoteEntry(_ item: ItemRecord) -> RemoteEntry? {
        guard !item.isDeleted else { return nil }
        let node = RemoteNode(path: item.path, kind: item.kind, version: item.current?.id, hash: item.current?.hash,
                              size: item.current?.size ?? 0, uploaded: item.current?.uploaded ?? true)
        return RemoteEntry(node: node, conflictCount: item.conflictCount, modified: item.current?.modified, deviceName: item.current?.deviceName,
                           created: item.created, permissions: item.current?.permissions)
    }

    /// Reads the server's change feed from the stored cursor into the Remote tree. Pulls never
    /// overlap (a page fetched earlier must not be applied over a later one).
    /// Reads the change feed from the cursor on; returns how many changes it applied.
    @discardableResult
    func pullRemote() async throws -> Int {
        if !pullTurn.tryEnter() { await withCheckedContinuation { pullTurn.queue($0) } }
        defer { pullTurn.leave() }
        var applied = 0
        var fetching = Duration.zero, applying = Duration.zero
        defer { if applied > 0 { logger.debug("pulled \(applied) change(s): fetched in \(fetching), applied in \(applying)") } }
        while true {
            let t0 = ContinuousClock.now
            let page = try await client.changes(config.container, after: cursor, limit: WireLimits.maxPage)
            let t1 = ContinuousClock.now
            fetching += t1 - t0
            defer { applying += ContinuousClock.now - t1 }
            applied += page.items.count
            var changes: [(ItemID, RemoteEntry?)] = []
            for item in page.items {
                // Excluded names never come from a well-behaved server; never materialise them.
                let e = item.path.isExcluded ? nil : Self.remoteEntry(item)
                changes.append((item.id, e))
            }
            try store.applyRemote(changes, cursor: page.cursor)
            for (id, var e) in changes {
                if let p = e?.node.path { e?.node.path = sharedPath(id, p) }
                remote[id] = e
            }
            cursor = page.cursor
            if !page.hasMore { break }
        }
        if applied > 0 { schedule(.remoteChanged) }
        return applied
    }

    /// Records an item the server just returned (after our own request).
    func noteRemote(_ item: ItemRecord) {
        let e = Self.remoteEntry(item)
        remote[item.id] = e
        try? store.applyRemote([(item.id, e)], cursor: nil)
    }

    func setSynced(_ id: ItemID, _ e: SyncedEntry?) throws {
        synced[id] = e
        try store.setSynced(id, e)
    }
}
