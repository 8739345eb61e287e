import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

/// The plan's steps on the server that move no content, as the engine runs them: the request
/// is built from the trees, sent by ``RemoteSteps`` (which only talks to the server), and its
/// outcome applied here — the one place these steps change the trees and the store.
extension SyncEngine {
    var remoteSteps: RemoteSteps { RemoteSteps(server: client, container: config.container) }

    func folderRequest(_ id: ItemID, _ l: (path: RelativePath, entry: LocalEntry), parent: ItemID?) -> CommitRequest {
        CommitRequest(itemID: id, versionID: VersionID(uuid: newUUID()), path: l.path, kind: .folder, base: nil,
                      modified: SyncEngine.date(nanos: l.entry.stamp.mtimeNanos), manifest: nil, parent: parent)
    }

    /// Makes a folder of this device's on the server.
    func createRemoteFolder(_ id: ItemID) async throws -> Bool {
        guard let l = local[id], l.entry.kind == .folder else { return false }
        claim([id])
        let request = folderRequest(id, l, parent: commitParent(id, l.path))
        try apply(try await remoteSteps.makeFolder(id, stamp: l.entry.stamp, request))
        return true
    }

    /// Creates several folders on the server in one commit request (they must not contain one
    /// another: the caller passes one depth at a time). True if any was created.
    func createRemoteFolders(_ ids: [ItemID]) async -> Bool {
        do {
            let wanted = ids.compactMap { id in local[id].flatMap { $0.entry.kind == .folder ? (id, $0) : nil } }
            var done = 0
            for start in stride(from: 0, to: wanted.count, by: TransferBatches.files) {
                let group = wanted[start..<min(wanted.count, start + TransferBatches.files)]
                let parents = localFolders(at: Set(group.compactMap { id, l in remote[id] == nil ? l.path.parent : nil }))
                claim(group.map(\.0))
                let folders = group.map { id, l in
                    (local: id, stamp: l.entry.stamp, request: folderRequest(id, l, parent: remote[id] == nil ? l.path.parent.flatMap { parents[$0] } : nil))
                }
                let outcome = try await remoteSteps.makeFolders(folders)
                if case .foldersMade(let made) = outcome { done += made.filter { $0.item != nil }.count }
                try apply(outcome)
            }
            return done > 0
        } catch where endsWithoutFailure(error) {
            return false
        } catch {
            logger.warning("creating \(ids.count) folders: \(error); creating them one at a time")
            var progressed = false
            for id in ids where await run(.createRemoteFolder(id)) { progressed = true }
            return progressed
        }
    }

    /// Moves an item on the server into the folder this device sees at the new parent path.
    func moveRemote(_ id: ItemID, to: RelativePath) async throws -> Bool {
        guard let s = synced[id] else { return false }
        var parent: ItemID?
        if let p = to.parent {
            // The folder this device sees at the new parent path; none yet: wait for it.
            guard let pid = localFolders(at: [p])[p] else { return false }
            parent = pid
        }
        sent.moving(id, to: to)
        return try apply(try await remoteSteps.move(id, from: s.node.path, to: to, into: parent))
    }

    /// Deletes an item on the server only if nothing in it changed after what the plan saw
    /// (`item_changed`: another device edited it, renamed it or moved something into the
    /// folder; the change is pulled and the item planned again, never deleted unseen).
    func deleteRemote(_ id: ItemID) async throws -> Bool {
        let folder = remote[id].flatMap { $0.node.kind == .folder ? $0.node.path : nil }
        return try apply(try await remoteSteps.delete(id, unchangedSince: min(trees.planCursor, cursor), folder: folder))
    }

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
