import Foundation
import Logging
import UbiqCore

/// Commits whose answers were lost, found again in the change feed: the version (or move) the
/// server took from this device becomes the merge base, as if the answer had come.
extension ItemIdentity {
    /// Moves the merge base of each item whose current version on the server is one this device
    /// sent without hearing the answer to that version (see `SentCommits`).
    mutating func adoptOwnVersions(in trees: ItemTrees, contents: ContentCache, logger: Logger) {
        guard !sent.isEmpty else { return }
        var changed = sent.keep { trees.remote[$0] != nil || trees.local[$0] != nil || trees.synced[$0] != nil }
        let own = sent.ownVersions(current: { trees.remote[$0].map { ($0.node.version, $0.node.uploaded) } }, base: { trees.synced[$0]?.node.version })
        for (id, s) in own {
            guard let r = trees.remote[id], r.node.kind == .file else { continue }
            // The stamp the file had when it was sent, if its manifest is still at hand: a file
            // unchanged since is then known without hashing it again.
            let m = contents.stamp(ofContent: s.hash)
            let entry = SyncedEntry(node: SyncedNode(path: trees.synced[id]?.node.path ?? r.node.path, kind: .file, version: s.version, hash: s.hash),
                                    stamp: m?.stamp ?? FileStamp(inode: 0, size: -1, mtimeNanos: 0, ctimeNanos: 0), stampHash: m == nil ? nil : s.hash)
            do {
                try trees.setSynced(id, entry)
                try trees.store.indexChunks(item: id, manifest: m?.manifest ?? Manifest(chunks: [], size: 0, hash: .empty))
            } catch {
                logger.warning("\(error)")
                continue
            }
            logger.info("\(r.node.path): the server took this device's version whose answer was lost; it is the merge base now")
            sent.answered([id])
            changed = true
        }
        for (id, to) in sent.ownMoves(path: { trees.remote[$0]?.node.path }, base: { trees.synced[$0]?.node.path }) {
            guard let from = trees.synced[id]?.node.path else { continue }
            do { try trees.rebaseSynced(id, from: from, to: to) } catch {
                logger.warning("\(error)")
                continue
            }
            logger.info("\(to): the server took this device's move whose answer was lost; it is the merge base now")
            sent.moveAnswered(id)
        }
        if changed {
            do { try saveSent() } catch { logger.warning("\(error)") }
        }
    }
}
