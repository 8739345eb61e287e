import Foundation
import UbiqCore

/// What only transfers need, owned by the engine: the pipelines that do the wire and disk
/// work (``UploadPipeline``, ``DownloadPipeline``: values in, outcomes out, no engine state),
/// the transfers running (listed with their progress), downloads cancelled while they run,
/// items held, versions whose stream gave up, and this run's totals. The engine's files
/// `SyncEngine+Uploads`, `+Downloads` and `+Batches` prepare the work from the trees and apply
/// what comes back (`apply(uploads:)`, `apply(downloads:)`: the one place transfers change the
/// trees and the store).
final class TransferState {
    let uploads: UploadPipeline
    let downloads: DownloadPipeline
    /// Transfers running now, with their progress (listings, `status`).
    var running: TrackedMap<Transfer>
    /// Versions still being uploaded elsewhere whose streaming download gave up waiting for
    /// chunks (the uploader stopped): they are downloaded once complete instead.
    var gaveUp: Set<VersionID> = []
    /// Downloads cancelled while they run (`cancelTransfers`): they stop at their next window.
    var cancelled: Set<ItemID> = []
    /// Transfer batches that failed as a whole (their halves then went as batches of their own).
    var failedBatches = 0
    /// Items whose transfers wait until resumed (`SyncEngine.hold`; until the engine stops).
    var held: Set<ItemID> = []
    /// What this run of transfers finished (`status` reports totals that only grow).
    var session = TransferSession()

    /// A transfer is over: no longer listed, and counted as this run's.
    func end(_ id: ItemID) {
        if let t = running[id] { session.ended(id, t) }
        running[id] = nil
    }

    init(uploads: UploadPipeline, downloads: DownloadPipeline, log: ChangeLog) {
        self.uploads = uploads
        self.downloads = downloads
        self.running = TrackedMap(log: log)
    }
}
