import Foundation
import Logging
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol
import UbiqTransport

/// Uploads and downloads, with what only they keep: the pipelines that do the wire and disk
/// work (``UploadPipeline``, ``DownloadPipeline``: values in, outcomes out), the transfers
/// running (listed with their progress), downloads cancelled while they run, items held,
/// versions whose stream gave up, this run's totals, and what the last scan learnt of file
/// contents (``ContentCache``).
///
/// Owned by one ``SyncEngine`` and confined to its executor: its work runs as
/// `nonisolated(nonsending)` methods called from the engine's, so it reads the trees (never
/// writing them) with no suspension in between, and everything that changes the engine's
/// state — the trees, new items' IDs, items' outcomes — goes through ``StepHost``, whose
/// `apply(uploads:)` and `apply(downloads:)` are the one place transfers reach the trees.
final class Transfers {
    let uploads: UploadPipeline
    let downloads: DownloadPipeline
    /// The engine that owns them (see ``StepHost``).
    unowned let host: any StepHost
    let trees: ItemTrees
    let store: EngineStore
    let files: LocalFiles
    let steps: LocalSteps
    let client: any SyncServer
    let disk: any FolderAccess
    let coordination: Coordination
    let settleTime: Duration
    let logger: Logger

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
    /// Manifests by stamp, and the bytes of small files the last scan hashed for the uploads
    /// that follow (dropped by the next scan that hashes, and at the end of the pass).
    var contents = ContentCache()

    init(host: any StepHost, client: any SyncServer, container: ContainerID, partials: String, trees: ItemTrees, store: EngineStore,
         files: LocalFiles, steps: LocalSteps, disk: any FolderAccess, coordination: Coordination, settleTime: Duration, logger: Logger) {
        self.host = host
        self.uploads = UploadPipeline(client: client, container: container)
        self.downloads = DownloadPipeline(client: client, container: container, partials: partials, disk: disk)
        self.running = TrackedMap(log: trees.changeLog)
        self.trees = trees
        self.store = store
        self.files = files
        self.steps = steps
        self.client = client
        self.disk = disk
        self.coordination = coordination
        self.settleTime = settleTime
        self.logger = logger
    }

    /// What the plan has queued (`status`).
    var queued = QueuedTransfers()

    /// A transfer is over: no longer listed, and counted as this run's.
    func end(_ id: ItemID) {
        if let t = running[id] { session.ended(id, t) }
        running[id] = nil
        queued.remove(id)
    }

    /// The engine's plan changed: what it queues is counted once.
    func planned(_ ops: [SyncOp]) {
        queued = QueuedTransfers(ops, ended: session.endedItems) { op in
            switch op {
            case .upload(let id, _): return local[id]?.entry.stamp.size ?? 0
            case .download(let id, _): return Int64(remote[id]?.node.size ?? 0)
            default: return nil
            }
        }
    }

    /// Bytes of a running transfer done so far (`add`: more of them).
    func progress(_ id: ItemID, _ n: Int, add: Bool) {
        if add { running[id]?.bytesDone += Int64(n) } else { running[id]?.bytesDone = Int64(n) }
    }

    var local: TrackedMap<(path: RelativePath, entry: LocalEntry)> { trees.local }
    var remote: TrackedMap<RemoteEntry> { trees.remote }
    var synced: TrackedMap<SyncedEntry> { trees.synced }

    /// This run's uploads and downloads for `status`: those running, those `queued` by the plan,
    /// and those finished — totals that never fall until nothing is left to move.
    func report() -> (up: EngineStatus.Transfers, down: EngineStatus.Transfers) {
        var (up, down) = queued.tally(excluding: running.storage.keys)
        for t in running.values {
            if t.direction == .up { up.running += 1; up.bytesDone += t.bytesDone; up.bytesTotal += t.bytesTotal } else {
                down.running += 1; down.bytesDone += t.bytesDone; down.bytesTotal += t.bytesTotal
            }
        }
        return (session.report(up, up: true), session.report(down, up: false))
    }

    /// Big files whose current version another device is still uploading: downloaded while the
    /// chunks arrive (the fetches wait for them), unless an attempt already gave up waiting.
    /// Small files are not worth it: their upload finishes in one request. Only `among` are
    /// looked at (the items a plan looks at: it asked every item of the Remote tree, #42).
    func streamable(among ids: Set<ItemID>) -> Set<ItemID> {
        var out = Set<ItemID>()
        for id in ids {
            guard let r = remote[id], !r.node.uploaded, r.node.kind == .file, Int64(r.node.size) > TransferBatches.fileLimit else { continue }
            if let v = r.node.version, !gaveUp.contains(v) { out.insert(id) }
        }
        return out
    }

    /// A chunk read from a synced file at the first of its recorded places where it still hashes right.
    func readChunk(_ hash: ContentHash, at places: [(item: ItemID, offset: Int, size: Int)]) -> [UInt8]? {
        for loc in places {
            guard let s = synced[loc.item], s.node.kind == .file,
                  let bytes = LocalFiles.read(path: files.path(s.node.path), offset: loc.offset, size: loc.size), files.chunker.naming.name(bytes) == hash else { continue }
            return bytes
        }
        return nil
    }
}

/// What the engine's executors (``Transfers``, ``RemoteStepRunner``) ask of the engine that
/// owns them: it alone changes the trees, new items' IDs and the items' outcomes. Called from
/// the engine's own executor (the executors run on it), so each call is an ordinary call on
/// the engine.
protocol StepHost: AnyObject, Sendable {
    /// Records what the server answered to a step that moves no content; true: the step is done.
    func apply(_ outcome: RemoteOutcome) async throws -> Bool
    /// Notes a move about to go out (see `SentCommits`).
    func noteMoving(_ id: ItemID, to: RelativePath) async
    /// Runs one step of the plan, recording its failure on the item.
    func run(_ op: SyncOp) async -> Bool
    /// Runs a batch of small files' transfers unless the engine stopped.
    func runBatch(_ ops: [SyncOp], upload: Bool) async -> Bool
    /// Whether the server answered the last request.
    func isOnline() async -> Bool
    /// Downloads the server announced while batches ran, in batches (nil: nothing was announced).
    func announcedDownloads(excluding inFlight: Set<ItemID>) async -> [[SyncOp]]?
    /// Keeps the IDs of new items about to be committed, before the commit goes out.
    func claim(_ ids: [ItemID]) async
    /// Notes commits before they go out.
    func noteSending(_ commits: [SentCommit]) async
    /// Notes that the answers of these items' commits were heard.
    func noteAnswered(_ items: [ItemID]) async
    /// Notes a version whose content this device stopped sending.
    func noteAbandoned(_ v: VersionID) async
    /// New time-ordered UUIDs for versions this device makes.
    func newUUIDs(_ count: Int) async -> [UUID]
    /// The local item now answers to the server's ID.
    func adopt(_ old: ItemID, as new: ItemID) async
    /// The server's answer about an item, noted in the Remote tree.
    func noteRemote(_ item: ItemRecord) async
    /// Records a failed step of an item (its message and retry delay).
    func failed(_ id: ItemID, code: String, message: String) async
    /// True when the error is nobody's failure (cancelled, or the server out of reach).
    func endsWithoutFailure(_ error: any Error) async -> Bool
    /// An edit of an item deleted on the server whose name was taken meanwhile: renamed aside. True if renamed.
    func revivesAside(_ id: ItemID, path: RelativePath) async -> Bool
    /// Records what the server answered to uploads (one transaction).
    func apply(uploads: [UploadPipeline.Answered]) async throws
    /// Records versions placed in the folder (one transaction); `swapped`: a local file was replaced.
    func apply(downloads: [DownloadPipeline.Placed], swapped: Bool) async throws
    /// Bytes of a running transfer done so far.
    func transferProgress(_ id: ItemID, _ n: Int, add: Bool) async
    /// Whether a running download stops at its next window (cancelled, or the folder changed while streaming).
    func shouldStepAside(_ id: ItemID, streaming: Bool) async -> Bool
    /// What this device holds of a download window (see `Transfers.localChunks`).
    func localChunks(of window: ArraySlice<ChunkRef>, replaced: ReplacedFileChunks?) async -> PartialDownload.LocalChunks
    /// The folder's watcher (downloads tell it which events are their own).
    func folderWatcher() async -> DirectoryWatcher?
}

/// A commit about to go out: the item, the version it makes and its content.
typealias SentCommit = (item: ItemID, version: VersionID, hash: ContentHash)

extension SyncOp {
    /// `upload` or `download`.
    var isTransfer: Bool {
        switch self {
        case .upload, .download: return true
        default: return false
        }
    }

    /// True for `createRemoteFolder`.
    var isRemoteFolderCreation: Bool {
        if case .createRemoteFolder = self { return true }
        return false
    }
}
