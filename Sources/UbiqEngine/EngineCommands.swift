import Foundation
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol

/// The user's commands (the CLI, the daemon, the front end): about items' content
/// (`+Content`: fetch, evict, pin, cancel, hold, retry), about versions, conflicts and the trash
/// (`+Server`), and about the folder itself (`+Folder`: rename, new folder, the unsynced and
/// excluded lists, rescue). ``SyncEngine``'s public methods hand each to it.
///
/// Owned by one engine and confined to its executor, like ``Transfers``: each command reads the
/// trees and records the user's wishes with no suspension between a check and the change it
/// allows; the folder changes through ``LocalSteps``, and what the engine must do — scan, sync,
/// pull, evict a file — goes through ``CommandHost``.
final class EngineCommands {
    unowned let host: any CommandHost
    let trees: ItemTrees
    let transfers: Transfers
    let wishes: DownloadWishes
    let outcomes: ItemOutcomes
    let steps: LocalSteps
    let files: LocalFiles
    let client: any SyncServer
    let config: DeviceConfig
    let home: DeviceHome
    let now: @Sendable () -> Date

    init(host: any CommandHost, trees: ItemTrees, transfers: Transfers, wishes: DownloadWishes, outcomes: ItemOutcomes, steps: LocalSteps,
         files: LocalFiles, client: any SyncServer, config: DeviceConfig, home: DeviceHome, now: @escaping @Sendable () -> Date) {
        self.host = host
        self.trees = trees
        self.transfers = transfers
        self.wishes = wishes
        self.outcomes = outcomes
        self.steps = steps
        self.files = files
        self.client = client
        self.config = config
        self.home = home
        self.now = now
    }

    var local: TrackedMap<(path: RelativePath, entry: LocalEntry)> { trees.local }
    var remote: TrackedMap<RemoteEntry> { trees.remote }

    /// The server's side of the commands (versions, conflicts, delete, trash).
    var server: ServerCommands { ServerCommands(server: client, container: config.container) }

    func itemID(at path: RelativePath) -> ItemID? { trees.itemID(at: path) }

    /// Items at or under a path (a folder names everything inside it).
    func items(under path: RelativePath) -> [ItemID] { trees.items(under: path) }

    func requireServerItem(_ path: RelativePath) throws -> ItemID {
        guard let id = itemID(at: path) else { throw EngineError(.notFound, "no item at \(path)") }
        guard remote[id] != nil else { throw EngineError(.notFound, "\(path) is not on the server yet") }
        return id
    }

    /// True when the item's local content is not (yet) on the server: eviction and removal refuse.
    func hasUnsyncedContent(_ id: ItemID) -> Bool {
        guard let l = local[id], l.entry.kind == .file else { return false }
        guard let s = trees.synced[id], let h = trees.localHashes[id] else { return true }  // new, or not hashed (still being written)
        if transfers.running[id]?.direction == .up { return true }
        if h == s.node.conflictHash { return false }
        return h != s.node.hash || !(remote[id]?.node.uploaded ?? false) && remote[id]?.node.hash == h
    }

    /// Reads what the server changed and syncs it.
    nonisolated(nonsending) func settle() async throws {
        _ = try await host.pullRemote()
        await host.syncNow()
    }
}

/// What the commands ask of the engine that owns them: its scans, passes and pulls, and the
/// changes to the trees they lead to. Called from the engine's own executor.
protocol CommandHost: AnyObject, Sendable {
    /// Reads the folder into the Local tree.
    func scanLocal() async
    /// Runs a pass now and waits for it.
    func syncNow() async
    /// Asks for a pass.
    func requestPass(after delay: Duration?) async
    /// Reads the server's change feed into the Remote tree.
    func pullRemote() async throws -> Int
    /// Drops a file's local content: the eviction recorded and the merge base forgotten, then the unlink.
    func evictLocal(_ id: ItemID) async throws
    /// Why the last pass could not reach the server (nil: it could).
    func lastFailure() async -> String?
    /// Items whose downloads the current pass planned.
    func plannedDownloads() async -> Set<ItemID>
}
