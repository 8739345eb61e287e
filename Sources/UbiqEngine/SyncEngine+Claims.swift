import Foundation
import UbiqCore

/// What a commit of a new item says about it: the folder it goes into (`parent`), and the ID it
/// claims before the commit goes out (`claims`), so the answer is never needed to know it again.
extension SyncEngine {
    /// The IDs of this device's folders at these paths (see `ItemTrees.localFolders`).
    func localFolders(at paths: Set<RelativePath>) -> [RelativePath: ItemID] { trees.localFolders(at: paths) }

    /// The `parent` of a commit of this item at `path`: only for an item new to the server.
    func commitParent(_ id: ItemID, _ path: RelativePath) -> ItemID? { trees.commitParent(id, path) }

    /// Keeps the IDs of new items about to be committed (see `InodeClaims`) before the commit goes out.
    func claim(_ ids: [ItemID]) {
        do { try identity.claim(ids, synced: { synced[$0] != nil }, inode: { local[$0]?.entry.stamp.inode }) } catch { logger.warning("\(error)") }
    }

    /// Notes commits before they go out.
    func noteSending(_ commits: [(item: ItemID, version: VersionID, hash: ContentHash)]) {
        do { try identity.sending(commits) } catch { logger.warning("\(error)") }
    }

    /// Notes that the answers of these items' commits were heard.
    func noteAnswered(_ items: [ItemID]) {
        do { try identity.answered(items) } catch { logger.warning("\(error)") }
    }

    /// A new time-ordered UUID for an item or version this device makes.
    func newUUID() -> UUID { identity.newUUID(at: now(), random: random()) }

    /// Moves the merge base of each item whose current version on the server is one this device
    /// sent without hearing the answer to that version (see `ItemIdentity.adoptOwnVersions`).
    func adoptOwnVersions() { identity.adoptOwnVersions(in: trees, contents: transfers.contents, logger: logger) }
}
