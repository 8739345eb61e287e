import CFileSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Moving a file or folder for `setUbiquitous`: a rename when both ends are on one file
/// system; otherwise a copy, flushed to disk, then the original removed (the copy is complete
/// before the original goes). The destination must not exist.
enum LocalMove {
    static func move(_ from: URL, to: URL) throws {
        let fm = FileManager.default
        guard fm.fileExists(atPath: from.path) else { throw UbiquityError(.fileSystem, "\(from.path) does not exist") }
        guard !fm.fileExists(atPath: to.path) else { throw UbiquityError(.fileSystem, "\(to.path) already exists") }
        do {
            try fm.createDirectory(at: to.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch { throw UbiquityError(.fileSystem, "cannot make \(to.deletingLastPathComponent().path): \(error.localizedDescription)") }
        // Never over something that appeared since the check (a download landing there).
        let moved = renameNoReplace(from.path, to.path)
        if moved == 0 { return }
        guard moved == EXDEV else { throw UbiquityError(.fileSystem, "cannot move \(from.path) to \(to.path): \(String(cString: strerror(moved)))") }
        let staging = to.deletingLastPathComponent().appendingPathComponent(".\(to.lastPathComponent).ubiq-moving-\(UUID().uuidString.prefix(8))")
        do {
            try fm.copyItem(at: from, to: staging)
            try flush(staging)
            let placed = renameNoReplace(staging.path, to.path)
            guard placed == 0 else { throw UbiquityError(.fileSystem, "cannot move into \(to.path): \(String(cString: strerror(placed)))") }
            try fm.removeItem(at: from)
        } catch let e as UbiquityError {
            try? fm.removeItem(at: staging)
            throw e
        } catch {
            try? fm.removeItem(at: staging)
            throw UbiquityError(.fileSystem, "cannot copy \(from.path) to \(to.path): \(error.localizedDescription)")
        }
    }

    /// Renames `from` to `to` unless something is at `to` (`renameat2(RENAME_NOREPLACE)`; on a
    /// file system that cannot, a check and a rename). 0 or the error number (EEXIST: taken).
    static func renameNoReplace(_ from: String, _ to: String) -> Int32 {
        if ubiq_rename_noreplace(from, to) == 0 { return 0 }
        let e = errno
        guard e == EINVAL || e == ENOSYS else { return e }
        var info = stat()
        if lstat(to, &info) == 0 { return EEXIST }
        return rename(from, to) == 0 ? 0 : errno
    }

    /// fsync of a file, or of every file in a folder.
    static func flush(_ url: URL) throws {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir) else { return }
        if isDir.boolValue {
            for name in try FileManager.default.contentsOfDirectory(atPath: url.path) { try flush(url.appendingPathComponent(name)) }
            return
        }
        let fd = open(url.path, O_RDONLY)
        guard fd >= 0 else { return }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw UbiquityError(.fileSystem, "cannot flush \(url.path): \(String(cString: strerror(errno)))") }
    }
}
