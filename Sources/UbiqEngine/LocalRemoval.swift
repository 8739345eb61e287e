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
    static func remove(_ path: String, expected: FileStamp, aside: String, beforeRename: (() -> Void)? = nil) throws -> Bool {
        guard let (_, now) = LocalFiles.stamp(path), now == expected else { return false }
        if LocalFiles.stamp(aside) == nil { try FileManager.default.createDirectory(atPath: aside, withIntermediateDirectories: true) }
        beforeRename?()
        let moved = aside + "/removed-\(UUID().uuidString).tmp"
        guard rename(path, moved) == 0 else {
            if errno == ENOENT { return false }
            throw EngineError(.storageFailure, "cannot remove \(path): \(String(cString: strerror(errno)))")
        }
        if let (_, got) = LocalFiles.stamp(moved), got.sameFileUnwritten(as: expected) {
            unlink(moved)
            return true
        }
        // Changed meanwhile: it goes back where it was, or beside it if that name is taken now.
        if ubiq_rename_noreplace(moved, path) == 0 { return false }
        if (errno == EINVAL || errno == ENOSYS) && LocalFiles.stamp(path) == nil && rename(moved, path) == 0 { return false }
        for n in 1...1000 {
            let kept = path + " (kept \(n))"
            if LocalFiles.stamp(kept) == nil && rename(moved, kept) == 0 { return false }
        }
        throw EngineError(.storageFailure, "cannot put back \(path); it is kept at \(moved)")
    }
}
