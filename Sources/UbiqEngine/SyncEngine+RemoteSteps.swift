import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

/// The outcomes of the plan's steps on the server that move no content (``RemoteStepRunner``
/// builds the requests from the trees, ``RemoteSteps`` sends them), applied here — the one
/// place these steps change the trees and the store.
extension SyncEngine {
    func noteMoving(_ id: ItemID, to: RelativePath) { sent.moving(id, to: to) }

    /// Applies what the server answered to a step that moves no content. True: the step is done.
    @discardableResult
    func apply(_ outcome: RemoteOutcome) throws -> Bool {
        switch outcome {
        case .foldersMade(let made):
            var remoteRows: [(ItemID, RemoteEntry?)] = [], syncedRows: [(ItemID, SyncedEntry?)] = []
            for m in made {
                guard let item = m.item else {
                    failed(m.local, code: m.refusal?.code.rawValue ?? "error", message: m.refusal?.message ?? "refused")
                    continue
                }
                adopt(m.local, as: item.id)
                let re = ItemTrees.remoteEntry(item)
                remote[item.id] = re
                remoteRows.append((item.id, re))
                let entry = SyncedEntry(node: SyncedNode(path: synced[item.id]?.node.path ?? item.path, kind: .folder, version: nil, hash: nil),
                                        stamp: m.stamp, stampHash: nil)
                synced[item.id] = entry
                syncedRows.append((item.id, entry))
                succeeded(m.local)
            }
            try store.recordBatch(remote: remoteRows, synced: syncedRows, index: [])
            return made.contains { $0.item != nil }
        case .moved(let id, let from, let to, let item):
            sent.moveAnswered(id)
            let old = remote[id]?.node.path ?? from
            noteRemote(item)
            // The server moved the folder's contents with it; so does our copy of its tree.
            try trees.moveRemoteContents(of: id, from: old, to: to)
            try trees.rebaseSynced(id, from: from, to: to)
            return true
        case .moveNameTaken(let id, let to):
            // Another device took the name first: this item gets a visible rename (`name (2)`)
            // here, which the next round sends to the server; nothing is dropped.
            sent.moveAnswered(id)
            schedule(.pullFirst)
            return try apply(steps.renameAside(id, from: to))
        case .moveWaits(let id, let why):
            logger.debug("move of \(id) waits: \(why)")
            sent.moveAnswered(id)
            schedule(.pullFirst)  // the server's folders moved: the next round pulls first
            return true
        case .deleteWaits(let id, let why):
            logger.debug("delete of \(id) waits: \(why)")
            schedule(.pullFirst)  // the next round pulls first
            return true
        case .deleted(let id, let item, let folder):
            noteRemote(item)
            // The server deleted what the folder held with it: so does the Remote tree, now —
            // until the feed said so, a pass made a never-seen subfolder here again, and its
            // `mkdir -p` brought the deleted folder back (#45, resurrected folders).
            if let folder { try trees.forgetRemoteContents(of: id, under: folder) }
            try setSynced(id, nil)
            return true
        case .alreadyGone(let id):
            remote[id] = nil
            try setSynced(id, nil)
            return true
        }
    }
}
