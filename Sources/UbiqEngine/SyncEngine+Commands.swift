import Foundation
import UbiqCore

extension SyncEngine {
    /// Status after one look at the server and the folder, without changing anything
    /// (`ubiq status` when no daemon runs).
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

    /// Copies files (or folders) to a new folder beside (never inside) the container folder and returns it.
    public func rescue(_ paths: [RelativePath]) throws -> URL {
        let stamp = Int(Date().timeIntervalSince1970)
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
