import Foundation
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol

/// The user's commands about versions, conflicts, deletion and the trash: requests to the
/// server (``ServerCommands``), then what it changed read back and synced.
extension EngineCommands {
    nonisolated(nonsending) func versions(of path: RelativePath) async throws -> VersionsResponse {
        try await server.versions(requireServerItem(path))
    }

    nonisolated(nonsending) func resolve(_ path: RelativePath, keep: VersionID) async throws -> ItemRecord {
        let item = try await server.resolve(requireServerItem(path), keep: keep)
        try await settle()
        return item
    }

    nonisolated(nonsending) func keepBoth(_ path: RelativePath) async throws -> [RelativePath] {
        let made = try await server.keepBoth(requireServerItem(path), at: path, parent: path.parent.flatMap { itemID(at: $0) })
        try await settle()
        return made
    }

    nonisolated(nonsending) func versionContent(_ path: RelativePath, version: VersionID, limit: Int, offset: Int) async throws -> [UInt8] {
        _ = try requireServerItem(path)
        return try await server.versionContent(of: path, version: version, limit: limit, offset: offset)
    }

    nonisolated(nonsending) func mergeDraft(_ path: RelativePath, conflict: VersionID?) async throws -> MergeDraft {
        try await server.mergeDraft(requireServerItem(path), at: path, conflict: conflict)
    }

    nonisolated(nonsending) func keepMerge(_ draft: MergeDraft, text: String) async throws -> ItemRecord {
        let item = try await server.keepMerge(draft, text: text, modified: now())
        try await settle()
        return item
    }

    /// Deletes items on every device. Refused for an item with changes not uploaded yet (they
    /// would be lost) and for one not on the server.
    nonisolated(nonsending) func remove(_ paths: [RelativePath]) async -> [PathResult] {
        await host.scanLocal()
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
                _ = try await server.delete(id)
                // The server moved the folder's contents to the trash too: read all of it back at
                // once, so no pass sees the folder gone but its contents still there (and revives it).
                _ = try await host.pullRemote()
                results.append(PathResult(path: p.string))
            } catch {
                results.append(PathResult(path: p.string, error: "\(error)"))
            }
        }
        await host.syncNow()
        return results
    }

    nonisolated(nonsending) func restore(_ path: RelativePath) async throws -> ItemRecord {
        let item = try await server.restore(path)
        try await settle()
        return item
    }
}
