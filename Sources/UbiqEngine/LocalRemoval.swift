import CFileSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Removing a local file because it was deleted elsewhere, without losing an edit made in the
/// instant between the engine's check and the removal.
enum LocalRemoval {
    /// Moves the file at `path` into `aside` (a folder on the same file system) and deletes it
    /// there only if it is still the planned file (inode, size and modification time); else
    /// puts it back (beside the path as "name (kept N)" if something new appeared there
    /// meanwhile). True if the planned file was removed. `beforeRename` lets tests act in that
    /// instant.
    static func remove(_ path: String, expected: FileStamp, aside: String, disk: any FolderAccess = SystemFolder(),
                       beforeRename: (() -> Void)? = nil) throws -> Bool {
        guard let (_, now) = LocalFiles.stamp(path), now == expected else { return false }
        if LocalFiles.stamp(aside) == nil { try FileManager.default.createDirectory(atPath: aside, withIntermediateDirectories: true) }
        beforeRename?()
        let moved = aside + "/removed-\(UUID().uuidString).tmp"
        let e = disk.rename(path, moved, .replace)
        guard e == 0 else {
            if e == ENOENT { return false }
            throw EngineError(.storageFailure, "cannot remove \(path): \(errnoText(e))")
        }
        if let (_, got) = LocalFiles.stamp(moved), got.sameFileUnwritten(as: expected) {
            _ = disk.removeFile(moved)  // left behind, it is only a file in the partial folder
            return true
        }
        // Changed meanwhile: it goes back where it was, or beside it if that name is taken now.
        let back = disk.rename(moved, path, .noReplace)
        if back == 0 { return false }
        if (back == EINVAL || back == ENOSYS) && LocalFiles.stamp(path) == nil && disk.rename(moved, path, .replace) == 0 { return false }
        for n in 1...1000 {
            let kept = path + " (kept \(n))"
            if LocalFiles.stamp(kept) == nil && disk.rename(moved, kept, .replace) == 0 { return false }
        }
        throw EngineError(.storageFailure, "cannot put back \(path); it is kept at \(moved)")
    }
}
