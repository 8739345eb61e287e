import Foundation
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol

/// The user's commands that the server carries out for every device: versions and conflicts
/// (list, pick, keep both, merge, preview), delete, trash and restore. Each asks the server,
/// then reads its changes back and syncs, so the folder shows the outcome when it returns.
/// Runs on the engine's queue (the `isolated` engine).
enum ServerCommands {
    /// Every version of the item at `path`: current, unresolved conflicts, history.
    static func versions(of path: RelativePath, on e: isolated SyncEngine) async throws -> VersionsResponse {
        let id = try e.requireServerItem(path)
        return try await e.client.versions(e.config.container, item: id)
    }

    /// Makes one version (current, conflict or history) the current one everywhere.
    static func resolve(_ path: RelativePath, keep: VersionID, on e: isolated SyncEngine) async throws -> ItemRecord {
        let id = try e.requireServerItem(path)
        let item = try await e.client.resolve(e.config.container, item: id, keep: keep)
        try await settle(e)
        return item
    }

    /// Keeps the current version and makes every conflict version a document of its own beside
    /// it (`name (conflict from DEVICE DATE).ext`); returns the copies' paths.
    static func keepBoth(_ path: RelativePath, on e: isolated SyncEngine) async throws -> [RelativePath] {
        let id = try e.requireServerItem(path)
        let parent = path.parent.flatMap { e.itemID(at: $0) }
        let made = try await KeepBoth.perform(e.client, container: e.config.container, item: id, path: path, parent: parent)
        try await settle(e)
        return made
    }

    /// Up to `limit` bytes of one version's content from `offset` (previews; a version opened
    /// outside, piece by piece), fetched chunk by chunk and verified; nothing is written to the
    /// folder.
    static func versionContent(_ path: RelativePath, version: VersionID, limit: Int, offset: Int, on e: isolated SyncEngine) async throws -> [UInt8] {
        _ = try e.requireServerItem(path)
        let m = try await e.client.manifest(e.config.container, version: version)
        var out: [UInt8] = []
        var at = 0  // where the chunk starts in the content
        for c in m.chunks where out.count < limit {
            defer { at += c.size }
            guard at + c.size > offset else { continue }
            let bytes = try await e.client.downloadChunk(c.hash)
            guard ContentHash.of(bytes) == c.hash else { throw EngineError(.hashMismatch, "a chunk of \(path) did not match its hash") }
            out += bytes.dropFirst(max(0, offset - at)).prefix(limit - out.count)
        }
        return out
    }

    /// A three-way merge of a text conflict (see `SyncEngine.mergeDraft`).
    static func mergeDraft(_ path: RelativePath, conflict: VersionID?, on e: isolated SyncEngine) async throws -> MergeDraft {
        let id = try e.requireServerItem(path)
        return try await ConflictMerge.draft(e.client, container: e.config.container, item: id, path: path, conflict: conflict)
    }

    /// Keeps a merge's text as the document's current version (see `SyncEngine.keepMerge`).
    static func keepMerge(_ draft: MergeDraft, text: String, on e: isolated SyncEngine) async throws -> ItemRecord {
        let item = try await ConflictMerge.keep(e.client, container: e.config.container, draft: draft, text: text, modified: Date())
        try await settle(e)
        return item
    }

    /// Deletes items on every device (the server keeps them in its trash). Refused for an item
    /// with changes not uploaded yet (they would be lost) and for one not on the server.
    static func remove(_ paths: [RelativePath], on e: isolated SyncEngine) async -> [PathResult] {
        await e.scanLocal()
        var results: [PathResult] = []
        for p in paths {
            guard let id = e.itemID(at: p) else { results.append(PathResult(path: p.string, error: "no item at \(p)")); continue }
            if let bad = e.items(under: p).first(where: { e.hasUnsyncedContent($0) }) {
                let bp = e.local[bad]?.path ?? p
                results.append(PathResult(path: p.string, error: "\(bp) has changes not uploaded yet; wait for them (run 'ubiq sync') and try again"))
                continue
            }
            guard e.remote[id] != nil else { results.append(PathResult(path: p.string, error: "\(p) is not on the server yet")); continue }
            do {
                _ = try await e.client.delete(e.config.container, item: id)
                // The server moved the folder's contents to the trash too: read all of it back at
                // once, so no pass sees the folder gone but its contents still there (and revives it).
                try await e.pullRemote()
                results.append(PathResult(path: p.string))
            } catch {
                results.append(PathResult(path: p.string, error: "\(error)"))
            }
        }
        await e.syncNow()
        return results
    }

    /// Brings an item back from the trash (with its history) on every device.
    static func restore(_ path: RelativePath, on e: isolated SyncEngine) async throws -> ItemRecord {
        guard let hit = try await e.client.trash(e.config.container).items.first(where: { $0.path == path }) else {
            throw EngineError(.notFound, "nothing at \(path) in the trash")
        }
        let item = try await e.client.restore(e.config.container, item: hit.id)
        try await settle(e)
        return item
    }

    /// Reads what the server changed and syncs it.
    static func settle(_ e: isolated SyncEngine) async throws {
        try await e.pullRemote()
        await e.syncNow()
    }
}
