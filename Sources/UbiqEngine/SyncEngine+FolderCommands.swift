import Foundation
import UbiqCore
import UbiqDaemonProtocol


/// The user's commands about the folder itself: rename an item and make a folder (`r`, `n`),
/// copy files out (`ubiq rescue`), and one look without syncing (`ubiq status` with no daemon,
/// the unsynced and excluded lists).
extension SyncEngine {
    /// Renames an item in its folder (`r` in the front end). An item on this device is renamed
    /// in the folder, as a person would in a shell (the pass takes it from there, and a rename is
    /// never over anything: the name must be free here and on the server); an item only in the
    /// cloud is moved on the server. Returns the new path.
    public func renameItem(_ path: RelativePath, to newName: String) async throws -> RelativePath {
        guard !newName.isEmpty, !newName.contains("/"), newName != ".", newName != ".." else {
            throw EngineError(.invalidPath, "'\(newName)' is not a name (no '/', not empty)")
        }
        let target = try path.parent.map { try $0.appending(newName) } ?? RelativePath(validating: newName)
        guard target != path else { return path }
        await scanLocal()
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
            try await pullRemote()
        }
        await syncNow()
        return target
    }

    /// Makes a new folder (`n` in the front end) in the synced folder; the pass sends it up.
    public func makeFolder(_ path: RelativePath) async throws {
        await scanLocal()
        guard itemID(at: path) == nil, LocalFiles.stamp(files.path(path)) == nil else { throw EngineError(.pathExists, "'\(path)' is taken") }
        try steps.makeFolder(path)
        await syncNow()
    }

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

    /// Local files whose content the server does not have yet.
    public func unsyncedLocalPaths() async -> [RelativePath] {
        await scanLocal()
        let t = trees.forPlanner()
        return Planner.plan(t, evicted: evicted).compactMap { op -> RelativePath? in
            if case .upload(let id, _) = op { return t.local[id]?.path }
            return nil
        }.sorted()
    }

    /// Excluded (`.nosync`) items that never leave the device, outermost only.
    public func excludedPaths() async -> [RelativePath] {
        await scanLocal()
        return trees.excludedLocal.keys.filter { !($0.parent?.isExcluded ?? false) }.sorted()
    }
}

/// Copies files out of the folder (`ubiq rescue`), with no state of the engine's.
enum FolderCommands {
    /// Copies files (or folders) to a new folder beside (never inside) the container folder
    /// and returns it.
    static func rescue(_ paths: [RelativePath], home: DeviceHome, container: ContainerID, files: LocalFiles, at now: Date) throws -> URL {
        let stamp = Int(now.timeIntervalSince1970)
        let dest = home.containersRoot.appendingPathComponent("Unsynced from \(container) \(stamp)", isDirectory: true)
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
