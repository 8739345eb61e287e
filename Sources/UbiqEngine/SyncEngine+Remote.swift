import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

extension SyncEngine {
    /// Reads the server's change feed from the stored cursor into the Remote tree; returns how
    /// many changes it applied. Pulls never overlap (a page fetched earlier must not be applied
    /// over a later one).
    @discardableResult
    func pullRemote() async throws -> Int {
        if !pullTurn.tryEnter() { await withCheckedContinuation { pullTurn.queue($0) } }
        defer { pullTurn.leave() }
        var applied = 0
        var fetching = Duration.zero, applying = Duration.zero
        defer { if applied > 0 { logger.debug("pulled \(applied) change(s): fetched in \(fetching), applied in \(applying)") } }
        while true {
            let t0 = ContinuousClock.now
            let page: ChangesResponse
            do {
                page = try await client.changes(config.container, after: cursor, limit: WireLimits.maxPage)
            } catch let e as ClientError where e.code == .cursorExpired {
                logger.info("the server forgot deletes made since this device last looked (change \(cursor)): reading its whole list again")
                applied += try await reloadRemote()
                break
            }
            let t1 = ContinuousClock.now
            fetching += t1 - t0
            defer { applying += ContinuousClock.now - t1 }
            applied += page.items.count
            try trees.apply(page: page.items, cursor: page.cursor)
            if !page.hasMore { break }
        }
        if applied > 0 { schedule(.remoteChanged) }
        return applied
    }

    /// Reads the whole change feed from 0 and makes it the Remote tree (what it no longer lists
    /// was deleted; see `ItemTrees.replaceRemote`). Returns how many items it listed.
    private func reloadRemote() async throws -> Int {
        var items: [ItemRecord] = []
        var next: Int64 = 0
        while true {
            let page = try await client.changes(config.container, after: next, limit: WireLimits.maxPage)
            items += page.items
            next = page.cursor
            if !page.hasMore { break }
        }
        try trees.replaceRemote(with: items, cursor: next)
        return max(1, items.count)
    }

    /// Records an item the server just returned (after our own request).
    func noteRemote(_ item: ItemRecord) { trees.noteRemote(item) }

    func setSynced(_ id: ItemID, _ e: SyncedEntry?) throws { try trees.setSynced(id, e) }
}
