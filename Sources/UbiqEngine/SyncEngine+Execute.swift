import CFileSupport
import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

extension SyncEngine {
    /// Runs a planned batch: quick metadata steps first (folders parents-first), then transfers
    /// (several at once), then deletions (children first). Returns true if anything changed.
    func execute(_ ops: [SyncOp]) async -> Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        func depth(_ id: ItemID) -> Int { (local[id]?.path ?? remote[id]?.node.path ?? synced[id]?.node.path)?.components.count ?? 0 }
        let order = ExecutionOrder(ops, depth: depth)
        let moving = order.transfers  // uploads and downloads
        var progressed = false
        for folders in order.folderBatches {
            if await remoteSteps.createRemoteFolders(folders) { progressed = true }
            if !online { return progressed }
        }
        for op in ExecutionOrder.parentsFirst(order.quick, depth: depth) {
            if await run(op) { progressed = true }
            if !online { return progressed }
        }
        let (upBatches, downBatches, singles) = transfers.splitBatches(moving)
        if await transfers.runBatches(uploads: upBatches, downloads: downBatches, inFlight: Set(moving.map(\.item))) { progressed = true }
        if !online { return progressed }
        if await transfers.runSingles(singles) { progressed = true }
        if !online { return progressed }
        for op in ExecutionOrder.childrenFirst(order.deletes, depth: depth) {
            if await run(op) { progressed = true }
            if !online { return progressed }
        }
        return progressed
    }

    /// When the server announced changes while batches ran: pulls them and plans again; if
    /// everything left to do (besides the items in flight) is downloads of small files, returns
    /// them in batches (noted as planned), else none — anything else (folders to create, moves,
    /// deletions, uploads, big files) waits for the pass's next round. Nil: nothing was announced.
    func announcedDownloads(excluding inFlight: Set<ItemID>) async -> [[SyncOp]]? {
        guard online, scheduler.newsPending else { return nil }
        let more = await batchesOfAnnounced(excluding: inFlight)
        pendingOps += more.joined()
        return more
    }

    private func batchesOfAnnounced(excluding inFlight: Set<ItemID>) async -> [[SyncOp]] {
        guard await pullForPass() else { return [] }
        if watcher == nil || unstable > 0 || watcher?.foreignEvents() != foreignAtScan { return [] }
        let ops = plan().filter { !inFlight.contains($0.item) }
        guard !ops.isEmpty, ops.allSatisfy({ if case .download = $0 { return true } else { return false } }) else { return [] }
        let (_, down, single) = transfers.splitBatches(ops)
        return single.isEmpty ? down : []
    }

    func isOnline() -> Bool { online }

    /// Runs one operation; errors are recorded on the item (or mark the engine offline).
    func run(_ op: SyncOp) async -> Bool {
        guard !stopped else { return false }
        do {
            let done: Bool
            switch op {
            case .upload(let id, let base): done = try await transfers.uploadFile(id, base: base)
            case .download(let id, let v): done = try await transfers.downloadFile(id, version: v)
            case .createRemoteFolder(let id): done = try await remoteSteps.createRemoteFolder(id)
            case .moveRemote(let id, let to): done = try await remoteSteps.moveRemote(id, to: to)
            case .deleteRemote(let id): done = try await remoteSteps.deleteRemote(id)
            case .createLocalFolder(let id): done = try apply(steps.createFolder(id))
            case .moveLocal(let id, let to): done = try apply(steps.move(id, to: to))
            case .deleteLocal(let id): done = try apply(steps.delete(id))
            case .markSynced(let id): done = try apply(steps.markSynced(id))
            case .forget(let id): try setSynced(id, nil); done = true
            }
            if done { succeeded(op.item) }
            logger.debug("\(op) \((local[op.item]?.path ?? remote[op.item]?.node.path ?? synced[op.item]?.node.path).map { "'\($0)' " } ?? "")→ \(done ? "done" : "skipped")")
            return done
        } catch where endsWithoutFailure(error) {
            return false
        } catch {
            failed(op.item, error: error)
            logger.warning("\(op): \(error)")
            if case .upload(let id, nil) = op, (error as? ClientError)?.code == .invalidRequest, local[id] != nil, synced[id] == nil {
                // The server refused the ID for this content (it names an item of another kind):
                // the local item takes a fresh ID instead of retrying the same refusal.
                adopt(id, as: ItemID(uuid: newUUID()))
            }
            return false
        }
    }

    /// The local item now answers to the server's ID (the server merged it with an item at the same path).
    func adopt(_ old: ItemID, as new: ItemID) {
        if let l = trees.adopt(old, as: new) { identity.newLocalIDs[l.entry.stamp.inode] = new }
    }

    static func date(nanos: Int64) -> Date { Date(timeIntervalSince1970: Double(nanos) / 1e9) }

    /// Sets the cursor the round's plan saw (tests: a pull that came while the round ran).
    func setPlanCursor(_ c: Int64) { trees.planCursor = c }
}
