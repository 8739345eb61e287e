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
    /// sent without hearing the answer to that version (see `SentCommits`).
    func adoptOwnVersions() {
        guard !sent.isEmpty else { return }
        var changed = sent.keep { self.remote[$0] != nil || self.local[$0] != nil || self.synced[$0] != nil }
        let own = sent.ownVersions(current: { self.remote[$0].map { ($0.node.version, $0.node.uploaded) } }, base: { self.synced[$0]?.node.version })
        for (id, s) in own {
            guard let r = remote[id], r.node.kind == .file else { continue }
            // The stamp the file had when it was sent, if its manifest is still at hand: a file
            // unchanged since is then known without hashing it again.
            let m = contents.stamp(ofContent: s.hash)
            let entry = SyncedEntry(node: SyncedNode(path: synced[id]?.node.path ?? r.node.path, kind: .file, version: s.version, hash: s.hash),
                                    stamp: m?.stamp ?? FileStamp(inode: 0, size: -1, mtimeNanos: 0, ctimeNanos: 0), stampHash: m == nil ? nil : s.hash)
            do {
                try setSynced(id, entry)
                try store.indexChunks(item: id, manifest: m?.manifest ?? Manifest(chunks: [], size: 0, hash: .empty))
            } catch {
                logger.warning("\(error)")
                continue
            }
            logger.info("\(r.node.path): the server took this device's version whose answer was lost; it is the merge base now")
            sent.answered([id])
            changed = true
        }
        for (id, to) in sent.ownMoves(path: { self.remote[$0]?.node.path }, base: { self.synced[$0]?.node.path }) {
            guard let from = synced[id]?.node.path else { continue }
            do { try trees.rebaseSynced(id, from: from, to: to) } catch {
                logger.warning("\(error)")
                continue
            }
            logger.info("\(to): the server took this device's move whose answer was lost; it is the merge base now")
            sent.moveAnswered(id)
        }
        if changed {
            do { try identity.saveSent() } catch { logger.warning("\(error)") }
        }
    }
}
