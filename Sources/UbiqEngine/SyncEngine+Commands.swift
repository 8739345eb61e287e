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
        pendingOps = Planner.plan(trees(), policy: config.download == .all ? .all : .onDemand, pinned: pinned())
        return status()
    }

    /// Local files whose content the server does not have yet.
    public func unsyncedLocalPaths() async -> [RelativePath] {
        await scanLocal()
        let t = trees()
        return Planner.plan(t).compactMap { op -> RelativePath? in
            if case .upload(let id, _) = op { return t.local[id]?.path }
            return nil
        }.sorted()
    }

    /// Copies files to a new folder beside (never inside) the container folder and returns it.
    public func rescue(_ paths: [RelativePath]) throws -> URL {
        let stamp = Int(Date().timeIntervalSince1970)
        let dest = home.containersRoot.appendingPathComponent("Unsynced from \(config.container) \(stamp)", isDirectory: true)
        for p in paths {
            let to = dest.appendingPathComponent(p.string)
            try LocalFiles.makeParents(of: to)
            do { try FileManager.default.copyItem(at: files.url(p), to: to) } catch {
                throw EngineError(.storageFailure, "cannot copy \(p) to \(to.path): \(error.localizedDescription)")
            }
        }
        return dest
    }
}
