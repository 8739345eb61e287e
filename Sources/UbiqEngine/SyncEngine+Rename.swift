import CFileSupport
import Foundation
import UbiqCore

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
}
