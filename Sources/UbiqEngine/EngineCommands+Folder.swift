import Foundation
import UbiqCore

/// The user's commands about the folder itself: rename an item and make a folder (`r`, `n`),
/// the unsynced and excluded lists, and copying files out (`ubiq rescue`).
extension EngineCommands {
    /// Renames an item in its folder (see ``SyncEngine/renameItem(_:to:)``). Returns the new path.
    nonisolated(nonsending) func renameItem(_ path: RelativePath, to newName: String) async throws -> RelativePath {
        guard !newName.isEmpty, !newName.contains("/"), newName != ".", newName != ".." else {
            throw EngineError(.invalidPath, "'\(newName)' is not a name (no '/', not empty)")
        }
        let target = try path.parent.map { try $0.appending(newName) } ?? RelativePath(validating: newName)
        guard target != path else { return path }
        await host.scanLocal()
        guard let id = itemID(at: path) else { throw EngineError(.notFound, "no item at \(path)") }
        guard itemID(at: target) == nil, LocalFiles.stamp(files.path(target)) == nil else { throw EngineError(.pathExists, "'\(target)' is taken") }
        if local[id] != nil {
            try steps.rename(path, to: target)
        } else {
            guard remote[id] != nil else { throw EngineError(.notFound, "no item at \(path)") }
            if let parent = target.parent, let folder = itemID(at: parent) {
                _ = try await client.move(config.container, item: id, to: target, into: folder)
            } else {
                _ = try await client.move(config.container, item: id, to: target)
            }
            _ = try await host.pullRemote()
        }
        await host.syncNow()
        return target
    }

    /// Makes a new folder in the synced folder; the pass sends it up.
    nonisolated(nonsending) func makeFolder(_ path: RelativePath) async throws {
        await host.scanLocal()
        guard itemID(at: path) == nil, LocalFiles.stamp(files.path(path)) == nil else { throw EngineError(.pathExists, "'\(path)' is taken") }
        try steps.makeFolder(path)
        await host.syncNow()
    }

    /// Local files whose content the server does not have yet.
    nonisolated(nonsending) func unsyncedLocalPaths() async -> [RelativePath] {
        await host.scanLocal()
        let t = trees.forPlanner()
        return Planner.plan(t, evicted: wishes.evicted).compactMap { op -> RelativePath? in
            if case .upload(let id, _) = op { return t.local[id]?.path }
            return nil
        }.sorted()
    }

    /// Excluded (`.nosync`) items that never leave the device, outermost only.
    nonisolated(nonsending) func excludedPaths() async -> [RelativePath] {
        await host.scanLocal()
        return trees.excludedLocal.keys.filter { !($0.parent?.isExcluded ?? false) }.sorted()
    }

    /// Copies files (or folders) to a new folder beside (never inside) the container folder
    /// and returns it.
    func rescue(_ paths: [RelativePath]) throws -> URL {
        let stamp = Int(now().timeIntervalSince1970)
        let dest = home.containersRoot.appendingPathComponent("Unsynced from \(config.container) \(stamp)", isDirectory: true)
        try FileManager.default.createDirectory(at: dest, withIntermediateDirectories: true)
        let all = Set(paths)
        for p in paths.sorted() where !all.contains(where: { $0 != p && p.isSelfOrDescendant(of: $0) }) {
            let to = dest.appendingPathComponent(p.string)
            try LocalFiles.makeParents(of: to)
            do { try FileManager.default.copyItem(at: files.url(p), to: to) } catch {
                throw EngineError(.storageFailure, "cannot copy \(p) to \(to.path): \(error.localizedDescription)")
            }
        }
        return dest
    }
}
