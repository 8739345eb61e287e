import Crypto
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
        let state = listingState()
        let excluded = Dictionary(trees.excludedLocal.map { (Self.excludedID($0.key), $0) }, uniquingKeysWith: { a, _ in a })
        return (changeLog.generation, ids.map { id in
            if let (p, e) = excluded[id] { return (id, ListingState.excludedItem(p, e)) }
            return (id, state.item(id))
        })
    }

    /// One item's attributes, or nil when the engine does not know it.
    public func listed(_ id: ItemID) -> MetadataItem? { listingState().item(id) }

    /// A stable ID for an excluded item (it never gets a server ID): derived from its path.
    static func excludedID(_ p: RelativePath) -> ItemID {
        var bytes = Array(SHA256.hash(data: Data(("nosync:" + p.string).utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let u = bytes.withUnsafeBytes { $0.load(as: uuid_t.self) }
        return ItemID(uuid: UUID(uuid: u))
    }
}
