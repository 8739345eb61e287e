import Foundation
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol

/// The user's commands that the server carries out for every device: versions and conflicts
/// (list, pick, keep both, merge, preview), delete, trash and restore — the requests alone.
/// It holds the server and the container, never the engine's state: the engine finds the items
/// (``SyncEngine/requireServerItem(_:)``) and reads the server's changes back afterwards, so
/// the folder shows the outcome when the command returns.
struct ServerCommands: Sendable {
    let server: any SyncServer
    let container: ContainerID

    /// Every version of the item: current, unresolved conflicts, history.
    func versions(_ id: ItemID) async throws -> VersionsResponse { try await server.versions(container, item: id) }

    /// Makes one version (current, conflict or history) the current one everywhere.
    func resolve(_ id: ItemID, keep: VersionID) async throws -> ItemRecord { try await server.resolve(container, item: id, keep: keep) }

    /// Keeps the current version and makes every conflict version a document of its own beside
    /// it (`name (conflict from DEVICE DATE).ext`, in the folder `parent`); returns their paths.
    func keepBoth(_ id: ItemID, at path: RelativePath, parent: ItemID?) async throws -> [RelativePath] {
        try await KeepBoth.perform(server, container: container, item: id, path: path, parent: parent)
    }

    /// Up to `limit` bytes of one version's content from `offset` (previews; a version opened
    /// outside, piece by piece), fetched chunk by chunk, each verified against its hash.
    func versionContent(of path: RelativePath, version: VersionID, limit: Int, offset: Int) async throws -> [UInt8] {
        let m = try await server.manifest(container, version: version)
        var out: [UInt8] = []
        var at = 0  // where the chunk starts in the content
        for c in m.chunks where out.count < limit {
            defer { at += c.size }
            guard at + c.size > offset else { continue }
            let bytes = try await server.downloadChunk(c.hash)
            guard server.naming.name(bytes) == c.hash else { throw EngineError(.hashMismatch, "a chunk of \(path) did not match its hash") }
            out += bytes.dropFirst(max(0, offset - at)).prefix(limit - out.count)
        }
        return out
    }

    /// A three-way merge of a text conflict (see ``SyncEngine/mergeDraft(_:conflict:)``).
    func mergeDraft(_ id: ItemID, at path: RelativePath, conflict: VersionID?) async throws -> MergeDraft {
        try await ConflictMerge.draft(server, container: container, item: id, path: path, conflict: conflict)
    }

    /// Keeps a merge's text as the document's current version, modified at `modified`.
    func keepMerge(_ draft: MergeDraft, text: String, modified: Date) async throws -> ItemRecord {
        try await ConflictMerge.keep(server, container: container, draft: draft, text: text, modified: modified)
    }

    /// Deletes an item on every device (the server keeps it, and a folder's contents, in its trash).
    func delete(_ id: ItemID) async throws -> ItemRecord { try await server.delete(container, item: id) }

    /// Brings the item at `path` back from the trash (with its history) on every device.
    func restore(_ path: RelativePath) async throws -> ItemRecord {
        guard let hit = try await server.trash(container).items.first(where: { $0.path == path }) else {
            throw EngineError(.notFound, "nothing at \(path) in the trash")
        }
        return try await server.restore(container, item: hit.id)
    }
}
