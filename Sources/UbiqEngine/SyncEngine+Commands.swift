import Foundation
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol

/// The engine's command surface, for the CLI, the daemon and the front end, in files by
/// concern: this one (versions, conflicts, delete, trash — the requests are `ServerCommands`'),
/// `SyncEngine+ContentCommands` (fetch, evict, pin, cancel, hold, retry) and
/// `SyncEngine+FolderCommands` (rename, new folder, one look; `rescue`). Effects on the folder
/// happen through the pass or `LocalSteps`.
extension SyncEngine {
    /// The item at a path (listed by the server or only local).
    public func itemID(at path: RelativePath) -> ItemID? { trees.itemID(at: path) }

    func requireServerItem(_ path: RelativePath) throws -> ItemID {
        guard let id = itemID(at: path) else { throw EngineError(.notFound, "no item at \(path)") }
        guard remote[id] != nil else { throw EngineError(.notFound, "\(path) is not on the server yet") }
        return id
    }

    /// Items at or under a path (a folder names everything inside it).
    func items(under path: RelativePath) -> [ItemID] { trees.items(under: path) }

    /// True when the item's local content is not (yet) on the server: eviction and removal refuse.
    func hasUnsyncedContent(_ id: ItemID) -> Bool {
        guard let l = local[id], l.entry.kind == .file else { return false }
        guard let s = synced[id], let h = localHashes[id] else { return true }  // new, or not hashed (still being written)
        if transfers.running[id]?.direction == .up { return true }
        if h == s.node.conflictHash { return false }
        return h != s.node.hash || !(remote[id]?.node.uploaded ?? false) && remote[id]?.node.hash == h
    }

    // MARK: versions, conflicts, delete, trash (see `ServerCommands`)

    var serverCommands: ServerCommands { ServerCommands(server: client, container: config.container) }

    /// Every version of the item at `path`: current, unresolved conflicts, history.
    public func versions(of path: RelativePath) async throws -> VersionsResponse { try await serverCommands.versions(requireServerItem(path)) }
    /// Makes one version (current, conflict or history) the current one everywhere.
    public func resolve(_ path: RelativePath, keep: VersionID) async throws -> ItemRecord {
        let item = try await serverCommands.resolve(requireServerItem(path), keep: keep)
        try await settle()
        return item
    }
    /// Keeps the current version and makes every conflict version a document of its own beside it.
    public func keepBoth(_ path: RelativePath) async throws -> [RelativePath] {
        let made = try await serverCommands.keepBoth(requireServerItem(path), at: path, parent: path.parent.flatMap { itemID(at: $0) })
        try await settle()
        return made
    }
    /// Up to `limit` bytes of one version's content from `offset` (previews), verified; nothing
    /// is written to the folder.
    public func versionContent(_ path: RelativePath, version: VersionID, limit: Int = 64 << 10, offset: Int = 0) async throws -> [UInt8] {
        _ = try requireServerItem(path)
        return try await serverCommands.versionContent(of: path, version: version, limit: limit, offset: offset)
    }
    /// A three-way merge of a text conflict of the document at `path` (the conflict version
    /// `conflict`, or its only one) against the version both were edited from, to be looked at
    /// (and edited) before it is kept with ``keepMerge(_:text:)``.
    public func mergeDraft(_ path: RelativePath, conflict: VersionID? = nil) async throws -> MergeDraft {
        try await serverCommands.mergeDraft(requireServerItem(path), at: path, conflict: conflict)
    }
    /// Keeps `text` as the document's current version; the conflict and the replaced version stay in history.
    public func keepMerge(_ draft: MergeDraft, text: String) async throws -> ItemRecord {
        let item = try await serverCommands.keepMerge(draft, text: text, modified: now())
        try await settle()
        return item
    }
    /// Deletes items on every device (the server keeps them in its trash). Refused for an item
    /// with changes not uploaded yet (they would be lost) and for one not on the server.
    public func remove(_ paths: [RelativePath]) async -> [PathResult] {
        await scanLocal()
        var results: [PathResult] = []
        for p in paths {
            guard let id = itemID(at: p) else { results.append(PathResult(path: p.string, error: "no item at \(p)")); continue }
            if let bad = items(under: p).first(where: { hasUnsyncedContent($0) }) {
                let bp = local[bad]?.path ?? p
                results.append(PathResult(path: p.string, error: "\(bp) has changes not uploaded yet; wait for them (run 'ubiq sync') and try again"))
                continue
            }
            guard remote[id] != nil else { results.append(PathResult(path: p.string, error: "\(p) is not on the server yet")); continue }
            do {
                _ = try await serverCommands.delete(id)
                // The server moved the folder's contents to the trash too: read all of it back at
                // once, so no pass sees the folder gone but its contents still there (and revives it).
                try await pullRemote()
                results.append(PathResult(path: p.string))
            } catch {
                results.append(PathResult(path: p.string, error: "\(error)"))
            }
        }
        await syncNow()
        return results
    }
    /// Items in the server's trash (top-level deletions, newest first).
    public func trash() async throws -> [ItemRecord] { try await client.trash(config.container).items }
    /// Purges the server's trash now (`ubiq trash empty`): nothing in it can be restored after.
    public func emptyTrash() async throws -> TrashEmptied { try await client.emptyTrash(config.container) }
    /// Brings an item back from the trash (with its history) on every device.
    public func restore(_ path: RelativePath) async throws -> ItemRecord {
        let item = try await serverCommands.restore(path)
        try await settle()
        return item
    }

    /// Reads what the server changed and syncs it.
    func settle() async throws {
        try await pullRemote()
        await syncNow()
    }

    /// Copies files (or folders) to a new folder beside (never inside) the container folder and returns it.
    public func rescue(_ paths: [RelativePath]) throws -> URL {
        try FolderCommands.rescue(paths, home: home, container: config.container, files: files, at: now())
    }
}
