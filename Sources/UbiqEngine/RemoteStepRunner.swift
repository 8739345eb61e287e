import Foundation
import Logging
import UbiqCore
import UbiqProtocol

/// Runs the plan's steps on the server that move no content: builds each request from the
/// trees (read only), sends it through ``RemoteSteps`` and hands the outcome to the engine,
/// whose `apply(_:)` is the one place these steps change the trees. Owned by one engine and
/// confined to its executor, like ``Transfers``; what it asks of the engine goes through
/// ``StepHost``.
final class RemoteStepRunner {
    unowned let host: any StepHost
    let trees: ItemTrees
    let steps: RemoteSteps
    let logger: Logger

    init(host: any StepHost, trees: ItemTrees, steps: RemoteSteps, logger: Logger) {
        self.host = host
        self.trees = trees
        self.steps = steps
        self.logger = logger
    }

    static func folderRequest(_ id: ItemID, _ l: (path: RelativePath, entry: LocalEntry), parent: ItemID?, uuid: UUID) -> CommitRequest {
        CommitRequest(itemID: id, versionID: VersionID(uuid: uuid), path: l.path, kind: .folder, base: nil,
                      modified: SyncEngine.date(nanos: l.entry.stamp.mtimeNanos), manifest: nil, parent: parent)
    }

    /// Makes a folder of this device's on the server.
    nonisolated(nonsending) func createRemoteFolder(_ id: ItemID) async throws -> Bool {
        guard let l = trees.local[id], l.entry.kind == .folder else { return false }
        await host.claim([id])
        let request = Self.folderRequest(id, l, parent: trees.commitParent(id, l.path), uuid: await host.newUUIDs(1)[0])
        return try await host.apply(try await steps.makeFolder(id, stamp: l.entry.stamp, request))
    }

    /// Creates several folders on the server in one commit request (they must not contain one
    /// another: the caller passes one depth at a time); if that fails, one at a time. True if
    /// any was created.
    nonisolated(nonsending) func createRemoteFolders(_ ids: [ItemID]) async -> Bool {
        do {
            let wanted = ids.compactMap { id in trees.local[id].flatMap { $0.entry.kind == .folder ? (id, $0) : nil } }
            var done = 0
            for start in stride(from: 0, to: wanted.count, by: TransferBatches.files) {
                let group = wanted[start..<min(wanted.count, start + TransferBatches.files)]
                let parents = trees.localFolders(at: Set(group.compactMap { id, l in trees.remote[id] == nil ? l.path.parent : nil }))
                await host.claim(group.map(\.0))
                let uuids = await host.newUUIDs(group.count)
                let folders = zip(group, uuids).map { g, uuid in
                    let (id, l) = g
                    return (local: id, stamp: l.entry.stamp,
                            request: Self.folderRequest(id, l, parent: trees.remote[id] == nil ? l.path.parent.flatMap { parents[$0] } : nil, uuid: uuid))
                }
                let outcome = try await steps.makeFolders(folders)
                if case .foldersMade(let made) = outcome { done += made.filter { $0.item != nil }.count }
                _ = try await host.apply(outcome)
            }
            return done > 0
        } catch {
            if await host.endsWithoutFailure(error) { return false }
            logger.warning("creating \(ids.count) folders: \(error); creating them one at a time")
            var progressed = false
            for id in ids where await host.run(.createRemoteFolder(id)) { progressed = true }
            return progressed
        }
    }

    /// Moves an item on the server into the folder this device sees at the new parent path.
    nonisolated(nonsending) func moveRemote(_ id: ItemID, to: RelativePath) async throws -> Bool {
        guard let s = trees.synced[id] else { return false }
        var parent: ItemID?
        if let p = to.parent {
            // The folder this device sees at the new parent path; none yet: wait for it.
            guard let pid = trees.localFolders(at: [p])[p] else { return false }
            parent = pid
        }
        await host.noteMoving(id, to: to)
        return try await host.apply(try await steps.move(id, from: s.node.path, to: to, into: parent))
    }

    /// Deletes an item on the server only if nothing in it changed after what the plan saw
    /// (`item_changed`: another device edited it, renamed it or moved something into the
    /// folder; the change is pulled and the item planned again, never deleted unseen).
    nonisolated(nonsending) func deleteRemote(_ id: ItemID) async throws -> Bool {
        let folder = trees.remote[id].flatMap { $0.node.kind == .folder ? $0.node.path : nil }
        if let folder, let kept = trees.remote.first(where: { cid, c in c.node.path != folder && c.node.path.isSelfOrDescendant(of: folder) && trees.local[cid] != nil }) {
            // Something the server still has in the folder is here, elsewhere: the user moved it
            // out, and its move has not reached the server (it waits, or was refused). The
            // folder's delete would take it to the trash: it waits for that move.
            logger.debug("delete of '\(folder)' waits: '\(kept.value.node.path)' was moved out here")
            return false
        }
        return try await host.apply(try await steps.delete(id, unchangedSince: min(trees.planCursor, trees.cursor), folder: folder))
    }
}
