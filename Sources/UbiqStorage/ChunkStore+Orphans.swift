import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#endif

/// Files a crash left behind: a pack is written and fsynced before its index rows are
/// committed, and a loose chunk goes through `tmp/` before its rename, so a process killed in
/// between leaves a pack no index row names, or a temporary file. They hold nothing anyone can
/// read; each pack can be up to 16 MiB.
extension FolderChunkStore {
    /// The files that only an earlier process can have left: every pack and temporary file
    /// present now. Call it while no other process uses the store and before this one stores
    /// anything (the server holds its data folder's lock and has not started serving); the
    /// packs this process writes afterwards are never in the list.
    public func leftovers() throws -> OrphanCandidates {
        func names(_ folder: String) throws -> [String] {
            do { return try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path) } catch {
                throw StorageError(.storageFailure, "cannot list \(root.appendingPathComponent(folder).path): \(error.localizedDescription)")
            }
        }
        let packs = try names("packs").filter { $0.hasSuffix(".pack") }.map { String($0.dropLast(".pack".count)) }
        return OrphanCandidates(packs: packs, temporaries: try names("tmp"))
    }

    /// Removes the candidates no index row names (every temporary file is one), and says how many
    /// files and bytes went. Safe beside this process's own uploads: the index only ever gains
    /// rows, and only for packs written after the candidates were listed.
    public func removeOrphans(_ candidates: OrphanCandidates) async throws -> (files: Int, bytes: Int64) {
        let named = try await index.packNames()
        let root = self.root
        return try await BlockingIO.run {
            var files = 0
            var bytes: Int64 = 0
            func remove(_ path: String) {
                var st = stat()
                let size = lstat(path, &st) == 0 ? Int64(st.st_size) : 0
                if unlink(path) == 0 { files += 1; bytes += size }
            }
            let packsFolder = root.appendingPathComponent("packs").path
            for name in candidates.packs where !named.contains(name) { remove(packsFolder + "/" + name + ".pack") }
            let tmpFolder = root.appendingPathComponent("tmp").path
            for name in candidates.temporaries { remove(tmpFolder + "/" + name) }
            if files > 0 { FileIO.syncDirectory(packsFolder); FileIO.syncDirectory(tmpFolder) }
            return (files, bytes)
        }
    }
}

/// Pack names (without `.pack`) and temporary file names found in a chunk folder at one moment.
public struct OrphanCandidates: Sendable, Equatable {
    public let packs: [String]
    public let temporaries: [String]
}
