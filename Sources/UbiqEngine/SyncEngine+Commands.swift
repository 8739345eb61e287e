import Foundation
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol

/// The engine's command surface, for the CLI, the daemon and the front end: each is
/// ``EngineCommands``' (which asks the engine, as ``CommandHost``, for scans, passes and pulls).
extension SyncEngine: CommandHost {
    /// The item at a path (listed by the server or only local).
    public func itemID(at path: RelativePath) -> ItemID? { trees.itemID(at: path) }

    // MARK: versions, conflicts, delete, trash

    /// Every version of the item at `path`: current, unresolved conflicts, history.
    public func versions(of path: RelativePath) async throws -> VersionsResponse { try await commands.versions(of: path) }
    /// Makes one version (current, conflict or history) the current one everywhere.
    public func resolve(_ path: RelativePath, keep: VersionID) async throws -> ItemRecord { try await commands.resolve(path, keep: keep) }
    /// Keeps the current version and makes every conflict version a document of its own beside it.
    public func keepBoth(_ path: RelativePath) async throws -> [RelativePath] { try await commands.keepBoth(path) }
    /// Up to `limit` bytes of one version's content from `offset` (previews), verified; nothing
    /// is written to the folder.
    public func versionContent(_ path: RelativePath, version: VersionID, limit: Int = 64 << 10, offset: Int = 0) async throws -> [UInt8] {
        try await commands.versionContent(path, version: version, limit: limit, offset: offset)
    }
    /// A three-way merge of a text conflict of the document at `path` (the conflict version
    /// `conflict`, or its only one) against the version both were edited from, to be looked at
    /// (and edited) before it is kept with ``keepMerge(_:text:)``.
    public func mergeDraft(_ path: RelativePath, conflict: VersionID? = nil) async throws -> MergeDraft { try await commands.mergeDraft(path, conflict: conflict) }
    /// Keeps `text` as the document's current version; the conflict and the replaced version stay in history.
    public func keepMerge(_ draft: MergeDraft, text: String) async throws -> ItemRecord { try await commands.keepMerge(draft, text: text) }
    /// Deletes items on every device (the server keeps them in its trash). Refused for an item
    /// with changes not uploaded yet (they would be lost) and for one not on the server.
    public func remove(_ paths: [RelativePath]) async -> [PathResult] { await commands.remove(paths) }
    /// Items in the server's trash (top-level deletions, newest first).
    public func trash() async throws -> [ItemRecord] { try await client.trash(config.container).items }
    /// Purges the server's trash now (`ubiq trash empty`): nothing in it can be restored after.
    public func emptyTrash() async throws -> TrashEmptied { try await client.emptyTrash(config.container) }
    /// Brings an item back from the trash (with its history) on every device.
    public func restore(_ path: RelativePath) async throws -> ItemRecord { try await commands.restore(path) }

    // MARK: content on this device

    /// Fetches the content of the items at (or under) the paths and waits for it.
    public func download(_ paths: [RelativePath]) async -> [PathResult] { await commands.download(paths) }
    /// Tries the failing items at (or under) the paths again now instead of after their retry
    /// delay (all failing items when `paths` is empty); returns how many were waiting.
    public func retry(_ paths: [RelativePath]) -> Int {
        let n = commands.retry(paths)
        if n > 0 { requestPass() }
        return n
    }
    /// Drops the local content of the items at (or under) the paths; they stay listed as
    /// `notDownloaded` and absent from the folder. Refused for content not yet on the server.
    public func evict(_ paths: [RelativePath]) async -> [PathResult] { await commands.evict(paths) }
    /// Pins (or unpins) the items at the paths: a pinned item is kept on this device — on an
    /// on-demand device its content is fetched now and each new version as it comes; a pinned
    /// folder keeps everything in it, files added later too. Unpinning leaves the content as it
    /// is (`evict` drops it).
    public func pin(_ paths: [RelativePath], _ on: Bool) async -> [PathResult] {
        let (results, passDue) = commands.pin(paths, on)
        if passDue { requestPass() }
        return results
    }
    /// Cancels the downloads of the items at (or under) the paths (`X` in the front end): one
    /// running stops at its next window (what arrived is kept in its partial file, so a later
    /// fetch resumes), and an item not on this device stays in the cloud until fetched (`f`,
    /// `ubiq download`). An upload cannot be cancelled alone — the device would no longer agree
    /// with its folder; pausing (`P`, `ubiq pause`) stops every transfer.
    public func cancelTransfers(_ paths: [RelativePath]) -> [PathResult] { commands.cancelTransfers(paths, planned: plannedDownloads()) }
    /// Holds (or lets go) the transfers of the files at or under the paths: their uploads and
    /// downloads wait until resumed, everything else syncs; a download under way stops at its
    /// next window (what arrived is kept). In memory, like `setPaused`: a restart syncs them.
    public func hold(_ paths: [RelativePath], _ on: Bool) -> [PathResult] {
        let results = commands.hold(paths, on)
        if !on { requestPass() }
        return results
    }

    // MARK: the folder

    /// Renames an item in its folder (`r` in the front end). An item on this device is renamed
    /// in the folder, as a person would in a shell (the pass takes it from there, and a rename is
    /// never over anything: the name must be free here and on the server); an item only in the
    /// cloud is moved on the server. Returns the new path.
    public func renameItem(_ path: RelativePath, to newName: String) async throws -> RelativePath { try await commands.renameItem(path, to: newName) }
    /// Makes a new folder (`n` in the front end) in the synced folder; the pass sends it up.
    public func makeFolder(_ path: RelativePath) async throws { try await commands.makeFolder(path) }
    /// Local files whose content the server does not have yet.
    public func unsyncedLocalPaths() async -> [RelativePath] { await commands.unsyncedLocalPaths() }
    /// Excluded (`.nosync`) items that never leave the device, outermost only.
    public func excludedPaths() async -> [RelativePath] { await commands.excludedPaths() }
    /// Copies files (or folders) to a new folder beside (never inside) the container folder and returns it.
    public func rescue(_ paths: [RelativePath]) throws -> URL { try commands.rescue(paths) }

    /// `ubiq rekey`: documents sealed with an older generation of the account's key sent again sealed with the newest.
    public func rekey() async throws -> RekeyReport { try await commands.rekey(keyring) }

    /// Status after one look at the server and the folder, without changing anything.
    public func peek() async -> EngineStatus {
        do {
            try await pullRemote()
            online = true
        } catch {
            markOffline("\(error)")
            lastError = "\(error)"
        }
        await scanLocal()
        pendingOps = plan()
        return status()
    }

    // MARK: what the commands ask of the engine

    func evictLocal(_ id: ItemID) throws {
        // The eviction is recorded (and the merge base forgotten) before the unlink.
        try apply(steps.evict(id) {
            try wishes.evict([id], dropSynced: true)
            synced[id] = nil
        })
    }

    func lastFailure() -> String? { lastError }

    func plannedDownloads() -> Set<ItemID> {
        Set(pendingOps.compactMap { op -> ItemID? in if case .download(let id, _) = op { return id } else { return nil } })
    }
}
