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
        // renameat2(RENAME_NOREPLACE) is not in Glibc's module; link-free check above plus rename.
        if rename(from.path, to.path) == 0 { return }
        guard errno == EXDEV else { throw UbiquityError(.fileSystem, "cannot move \(from.path): \(String(cString: strerror(errno)))") }
        let staging = to.deletingLastPathComponent().appendingPathComponent(".\(to.lastPathComponent).ubiq-moving-\(UUID().uuidString.prefix(8))")
        do {
            try fm.copyItem(at: from, to: staging)
            try flush(staging)
            guard rename(staging.path, to.path) == 0 else { throw UbiquityError(.fileSystem, "cannot move into \(to.path): \(String(cString: strerror(errno)))") }
            try fm.removeItem(at: from)
        } catch let e as UbiquityError {
            try? fm.removeItem(at: staging)
            throw e
        } catch {
            try? fm.removeItem(at: staging)
            throw UbiquityError(.fileSystem, "cannot copy \(from.path) to \(to.path): \(error.localizedDescription)")
        }
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
