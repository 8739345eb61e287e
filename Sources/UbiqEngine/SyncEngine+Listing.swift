import Foundation
import UbiqCore

extension SyncEngine {
    /// The trees as they are now (no copying: the dictionaries are shared until changed).
    public func listingState() -> ListingState {
        var state = ListingState(remote: remote.storage, local: local.storage, synced: synced.storage, localHashes: localHashes.storage,
                                 transfers: transfers.running.storage, itemErrors: outcomes.errors.storage, excluded: trees.excludedLocal)
        state.pinned = wishes.pinned
        state.pinnedFolders = wishes.pinnedFolderPaths(remote: remote)
        state.held = transfers.held
        return state
    }

    /// Every item with the attributes of product §5, from local state only: no network round trip.
    public func listing() -> [MetadataItem] { listingState().all() }

    /// The trees and the change generation they reflect (a live query's gathering builds the
    /// items from them off the engine's queue).
    public func snapshot() -> (generation: UInt64, state: ListingState) { (changeLog.generation, listingState()) }

    /// What changed after `generation`: the attributes of each changed item (nil: gone), or
    /// nil when everything must be read again (see ``snapshot()``).
    public func changes(since generation: UInt64) -> (generation: UInt64, items: [(ItemID, MetadataItem?)]?) {
        guard let ids = changeLog.changes(since: generation) else { return (changeLog.generation, nil) }
        return (changeLog.generation, listingState().items(ids))
    }

    /// One item's attributes, or nil when the engine does not know it.
    public func listed(_ id: ItemID) -> MetadataItem? { listingState().item(id) }
}
