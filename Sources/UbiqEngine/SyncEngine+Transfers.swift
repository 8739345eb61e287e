import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

/// What the engine does for its transfers (see ``Transfers`` and ``StepHost``): the one
/// place their answers reach the trees (`apply(uploads:)`, `apply(downloads:swapped:)`), and
/// the calls their work off the queue makes back into it.
extension SyncEngine: StepHost {
    /// Transfer batches that failed as a whole (their halves then went as batches of their own).
    var batchesFailed: Int { transfers.failedBatches }

    func transferProgress(_ id: ItemID, _ n: Int, add: Bool) { transfers.progress(id, n, add: add) }

    /// A running download stops at its next window: it was cancelled, or (streaming) something
    /// other than this engine changed the folder since the last scan.
    func shouldStepAside(_ id: ItemID, streaming: Bool) -> Bool {
        transfers.cancelled.contains(id) || (streaming && (watcher.map { $0.foreignEvents() != foreignAtScan } ?? false))
    }

    func localChunks(of window: ArraySlice<ChunkRef>, replaced: ReplacedFileChunks?) -> PartialDownload.LocalChunks {
        transfers.localChunks(of: window, replaced: replaced)
    }

    func folderWatcher() -> DirectoryWatcher? { watcher }

    func newUUIDs(_ count: Int) -> [UUID] { (0..<count).map { _ in newUUID() } }

    /// Records what the server answered to uploads (single files and batches alike): the
    /// Remote tree, the merge base, the chunk index for the next edit's delta, the item's
    /// outcome — one transaction.
    func apply(uploads answered: [UploadPipeline.Answered]) throws {
        var remoteRows: [(ItemID, RemoteEntry?)] = [], syncedRows: [(ItemID, SyncedEntry?)] = [], index: [(ItemID, Manifest)] = []
        for a in answered {
            let sid = a.response.item.id
            let re = ItemTrees.remoteEntry(a.item)
            remote[a.item.id] = re
            remoteRows.append((a.item.id, re))
            let (entry, indexed) = UploadPipeline.syncedEntry(a, base: synced[sid])
            if indexed { index.append((sid, a.file.manifest)) }
            synced[sid] = entry
            syncedRows.append((sid, entry))
            succeeded(a.file.id)
        }
        try store.recordBatch(remote: remoteRows, synced: syncedRows, index: index)
    }

    /// Records versions placed in the folder (single files and batches alike): the merge base,
    /// the chunk index, the Local tree and its hash, the item's outcome — one transaction.
    /// `swapped`: a local file was replaced (it may be held in the partial folder; see `HeldFiles`).
    func apply(downloads placed: [DownloadPipeline.Placed], swapped: Bool) throws {
        if swapped { heldCheckDue = true }
        var syncedRows: [(ItemID, SyncedEntry?)] = [], index: [(ItemID, Manifest)] = []
        for p in placed {
            let w = p.wanted, r = w.remote
            let sPath = w.target == r.node.path ? r.node.path : (synced[w.id]?.node.path ?? w.target)
            let entry = SyncedEntry(node: SyncedNode(path: sPath, kind: .file, version: w.version, hash: p.manifest.hash), stamp: p.stamp, stampHash: p.manifest.hash)
            synced[w.id] = entry
            syncedRows.append((w.id, entry))
            index.append((w.id, p.manifest))
            transfers.contents.note(p.manifest, for: p.stamp)
            local[w.id] = (w.target, LocalEntry(kind: .file, stamp: p.stamp))
            localHashes[w.id] = p.manifest.hash
            succeeded(w.id)
        }
        try store.recordBatch(remote: [], synced: syncedRows, index: index)
    }

    /// An edit of an item deleted on the server wins and brings it back; when another item has
    /// taken its name since (another device made a new file there), the server refuses the
    /// path: the edited file is renamed beside it here (`name (2)`), and the next round sends it
    /// under that name. It retried the refused name for ever before. True if renamed.
    func revivesAside(_ id: ItemID, path: RelativePath) -> Bool {
        guard remote[id] == nil, synced[id] != nil else { return false }
        schedule(.pullFirst)
        do { return try apply(steps.renameAside(id, from: path)) } catch {
            logger.warning("\(error)")
            return false
        }
    }

    /// Runs a batch of small files' transfers (see `Transfers.runBatch`). True if anything changed.
    func runBatch(_ ops: [SyncOp], upload: Bool) async -> Bool {
        guard !stopped else { return false }
        return await transfers.runBatch(ops, upload: upload)
    }
}
