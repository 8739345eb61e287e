import UbiqCore

/// Catches a server showing an item's older version as its current one (a rollback): an
/// end-to-end encrypted account's records seal each version's generation (its base's + 1), and
/// a page of the change feed whose current version of an item is of a lower generation than
/// the one this device last heard of for it is `tampered` — refused whole, nothing written
/// into the folder, the server's copy left as it is. A plain account's versions have no
/// generation (nothing to check); an honest server never lowers one: a kept older version is
/// committed again as the newest (`SealedSyncServer.resolve`).
enum RollbackCheck {
    /// Throws `tampered` when `item`'s current version is older than `held`'s.
    static func check(_ item: ItemRecord, against held: RemoteEntry?) throws {
        guard !item.isDeleted, let held, let had = held.generation, let now = item.current, now.id != held.node.version else { return }
        // A record without a generation was sealed before generations: older than any with one.
        let generation = now.generation ?? 0
        guard generation < had else { return }
        throw CoreError(.tampered, "the server shows version \(now.id) of generation \(generation) as the current one of \(item.id), "
                            + "which this device has seen at generation \(had): an older version passed off as the newest (nothing was written)")
    }
}
