import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

/// What the engine gives transfers (see `TransferState`): the steps of a plan that move
/// content, and the calls the transfers' work off the queue makes back into it.
extension SyncEngine {
    /// Transfers running now, with their progress.
    var transfers: TrackedMap<Transfer> { get { transfer.running } _modify { yield &transfer.running } }
    /// Transfer batches that failed as a whole (their halves then went as batches of their own).
    var batchesFailed: Int { transfer.failedBatches }

    func addProgress(_ id: ItemID, _ n: Int) {
        transfers[id]?.bytesDone += Int64(n)
    }

    func setProgress(_ id: ItemID, _ n: Int) {
        transfers[id]?.bytesDone = Int64(n)
    }

    /// A running download stops at its next window: it was cancelled, or (streaming) the
    /// folder changed meanwhile.
    func shouldStepAside(_ id: ItemID, streaming: Bool) -> Bool {
        transfer.cancelled.contains(id) || (streaming && folderChangedSinceScan())
    }

    /// Something other than this engine changed the folder since the last scan.
    func folderChangedSinceScan() -> Bool {
        watcher.map { $0.foreignEvents() != foreignAtScan } ?? false
    }
}
