import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

/// The plan's steps on the server that move no content: make folders (one request for a
/// depth's worth), move and delete items. Each sends what the trees say and records the
/// answer in them; a refusal that means "another device got there first" is handled here
/// (a visible rename, or a pull before the next round), never by dropping the user's change.
/// Runs on the engine's queue (the `isolated` engine).
enum RemoteSteps {
    /// Makes a folder of this device's on the server.
    static func createFolder(_ id: ItemID, on e: isolated SyncEngine) async throws -> Bool {
        guard let l = e.local[id], l.entry.kind == .folder else { return false }
        e.claim([id])
        let resp = try await e.client.commit(e.config.container, CommitRequest(
            itemID: id, versionID: VersionID(uuid: e.newUUID()), path: l.path, kind: .folder, base: nil,
            modified: SyncEngine.date(nanos: l.entry.stamp.mtimeNanos), manifest: nil, parent: e.commitParent(id, l.path)))
        let sid = resp.item.id
        e.adopt(id, as: sid)
        e.noteRemote(resp.item)
        let path = e.synced[sid]?.node.path ?? resp.item.path
        try e.setSynced(sid, SyncedEntry(node: SyncedNode(path: path, kind: .folder, version: nil, hash: nil), stamp: l.entry.stamp, stampHash: nil))
        return true
    }

    /// Creates several folders on the server in one commit request (they must not contain one
    /// another: the caller passes one depth at a time). True if any was created.
    static func createFolders(_ ids: [ItemID], on e: isolated SyncEngine) async -> Bool {
        do {
            let wanted = ids.compactMap { id in e.local[id].flatMap { $0.entry.kind == .folder ? (id, $0) : nil } }
            var done = 0
            for start in stride(from: 0, to: wanted.count, by: TransferBatches.files) {
                let group = wanted[start..<min(wanted.count, start + TransferBatches.files)]
                let parents = e.localFolders(at: Set(group.compactMap { id, l in e.remote[id] == nil ? l.path.parent : nil }))
                e.claim(group.map(\.0))
                let requests = group.map { id, l in
                    CommitRequest(itemID: id, versionID: VersionID(uuid: e.newUUID()), path: l.path, kind: .folder, base: nil,
                                  modified: SyncEngine.date(nanos: l.entry.stamp.mtimeNanos), manifest: nil,
                                  parent: e.remote[id] == nil ? l.path.parent.flatMap { parents[$0] } : nil)
                }
                let results = try await e.client.commitMany(e.config.container, requests)
                var remoteRows: [(ItemID, RemoteEntry?)] = [], syncedRows: [(ItemID, SyncedEntry?)] = []
                for ((id, l), result) in zip(group, results) {
                    guard let item = result.response?.item else {
                        e.failed(id, code: result.error?.code.rawValue ?? "error", message: result.error?.message ?? "refused")
                        continue
                    }
                    e.adopt(id, as: item.id)
                    let re = ItemTrees.remoteEntry(item)
                    e.remote[item.id] = re
                    remoteRows.append((item.id, re))
                    let entry = SyncedEntry(node: SyncedNode(path: e.synced[item.id]?.node.path ?? item.path, kind: .folder, version: nil, hash: nil),
                                            stamp: l.entry.stamp, stampHash: nil)
                    e.synced[item.id] = entry
                    syncedRows.append((item.id, entry))
                    e.succeeded(id)
                    done += 1
                }
                try e.store.recordBatch(remote: remoteRows, synced: syncedRows, index: [])
            }
            return done > 0
        } catch where e.endsWithoutFailure(error) {
            return false
        } catch {
            e.logger.warning("creating \(ids.count) folders: \(error); creating them one at a time")
            var progressed = false
            for id in ids where await e.run(.createRemoteFolder(id)) { progressed = true }
            return progressed
        }
    }

    /// Moves an item on the server into the folder this device sees at the new parent path.
    static func move(_ id: ItemID, to: RelativePath, on e: isolated SyncEngine) async throws -> Bool {
        guard let s = e.synced[id] else { return false }
        e.sent.moving(id, to: to)
        do {
            let item: ItemRecord
            if let parent = to.parent {
                // The folder this device sees at the new parent path; none yet: wait for it.
                guard let pid = e.localFolders(at: [parent])[parent] else { return false }
                item = try await e.client.move(e.config.container, item: id, to: to, into: pid)
            } else {
                item = try await e.client.move(e.config.container, item: id, to: to)
            }
            e.sent.moveAnswered(id)
            let old = e.remote[id]?.node.path ?? s.node.path
            e.noteRemote(item)
            // The server moved the folder's contents with it; so does our copy of its tree.
            try e.trees.moveRemoteContents(of: id, from: old, to: to)
            try e.trees.rebaseSynced(id, from: s.node.path, to: to)
            return true
        } catch let refused as ClientError where refused.code == .pathExists {
            // Another device took the name first: this item gets a visible rename (`name (2)`)
            // here, which the next round sends to the server; nothing is dropped.
            e.sent.moveAnswered(id)
            e.schedule(.pullFirst)
            return try e.steps.renameAside(id, from: to)
        } catch let refused as ClientError where refused.code == .itemChanged {
            e.logger.debug("move of \(id) waits: \(refused.message)")
            e.sent.moveAnswered(id)
            e.schedule(.pullFirst)  // the server's folders moved: the next round pulls first
            return true
        }
    }

    /// Deletes an item on the server only if nothing in it changed after what the plan saw
    /// (`item_changed`: another device edited it, renamed it or moved something into the
    /// folder; the change is pulled and the item planned again, never deleted unseen).
    static func delete(_ id: ItemID, on e: isolated SyncEngine) async throws -> Bool {
        do {
            let folder = e.remote[id].flatMap { $0.node.kind == .folder ? $0.node.path : nil }
            let item = try await e.client.delete(e.config.container, item: id, unchangedSince: min(e.trees.planCursor, e.cursor))
            e.noteRemote(item)
            // The server deleted what the folder held with it: so does the Remote tree, now —
            // until the feed said so, a pass made a never-seen subfolder here again, and its
            // `mkdir -p` brought the deleted folder back (#45, resurrected folders).
            if let folder { try e.trees.forgetRemoteContents(of: id, under: folder) }
        } catch let refused as ClientError where refused.code == .notFound {
            e.remote[id] = nil
        } catch let refused as ClientError where refused.code == .itemChanged {
            e.logger.debug("delete of \(id) waits: \(refused.message)")
            e.schedule(.pullFirst)  // the next round pulls first
            return true
        }
        try e.setSynced(id, nil)
        return true
    }
}
