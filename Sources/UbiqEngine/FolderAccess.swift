import CFileSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What `FolderAccess.rename` does when something is at the destination.
public enum RenameMode: Sendable {
    /// Replaces it (`rename(2)`).
    case replace
    /// Refuses with `EEXIST` (`RENAME_NOREPLACE`).
    case noReplace
    /// Swaps the two (`RENAME_EXCHANGE`).
    case exchange
}

/// Every change the engine makes to the synced folder, as the system calls it makes: each
/// returns 0 or the error number (`errno`) and changes nothing when it fails, as the kernel
/// does. The engine's own is ``SystemFolder``; tests put one in its place that fails like a
/// full or failing disk (`ENOSPC`, `EIO`), to show that no failure of the disk loses a file.
/// Reading (scans, hashing) and the partial files beside the folder are not covered.
public protocol FolderAccess: Sendable {
    /// `mkdir(2)` with mode 0755.
    func makeFolder(_ path: String) -> Int32
    /// `rmdir(2)`.
    func removeFolder(_ path: String) -> Int32
    /// `unlink(2)`.
    func removeFile(_ path: String) -> Int32
    /// `rename(2)` / `renameat2(2)` with the mode's flag.
    func rename(_ from: String, _ to: String, _ mode: RenameMode) -> Int32
    /// The same access with every change under `root` made through `root`'s own folders: no
    /// symbolic link below it is followed (`SystemFolder` does; others may return themselves).
    func anchored(at root: String) -> any FolderAccess
}

extension FolderAccess {
    public func anchored(at root: String) -> any FolderAccess { self }
}

/// The folder as the kernel has it. Anchored at the container folder (`anchored(at:)`, as the
/// engine uses it), every change beneath it is made relative to a descriptor of the item's
/// parent folder, opened from the container folder without following any symbolic link (#45
/// row 10: the engine checked parents with `lstat` and then acted by path, so a folder swapped
/// for a link between the check and a rename or unlink was followed): such a swap is `ELOOP`.
public struct SystemFolder: FolderAccess {
    /// The folder nothing beneath which is reached through a link; nil: plain paths.
    public let root: String?

    public init() { root = nil }
    public init(beneath root: String) { self.root = root }

    public func anchored(at root: String) -> any FolderAccess { SystemFolder(beneath: root) }

    public func makeFolder(_ path: String) -> Int32 {
        at(path) { dir, name in mkdirat(dir, name, 0o755) }
    }
    public func removeFolder(_ path: String) -> Int32 {
        at(path) { dir, name in unlinkat(dir, name, AT_REMOVEDIR) }
    }
    public func removeFile(_ path: String) -> Int32 {
        at(path) { dir, name in unlinkat(dir, name, 0) }
    }
    public func rename(_ from: String, _ to: String, _ mode: RenameMode) -> Int32 {
        let flags: UInt32
        switch mode {
        case .replace: flags = 0
        case .noReplace: flags = 1
        case .exchange: flags = 2
        }
        return at(from) { fromDir, fromName in
            let e = at(to) { toDir, toName in ubiq_renameat(fromDir, fromName, toDir, toName, flags) }
            errno = e
            return e == 0 ? 0 : -1
        }
    }

    /// Runs `call` with a descriptor of `path`'s parent folder and its last name; the error
    /// number it leaves (0 when it returned 0).
    func at(_ path: String, _ call: (Int32, String) -> Int32) -> Int32 {
        let slash = path.lastIndex(of: "/")
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let parent = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let dir: Int32
        if let root, parent == root || parent.hasPrefix(root + "/") {
            let top = ubiq_open_dir(root)  // the root itself may be reached through a link
            guard top >= 0 else { return errno }
            defer { close(top) }
            dir = ubiq_open_beneath(top, parent == root ? "" : String(parent.dropFirst(root.count + 1)))
        } else {
            dir = ubiq_open_dir(parent)
        }
        guard dir >= 0 else { return errno }
        defer { close(dir) }
        return call(dir, name) == 0 ? 0 : errno
    }
}

extension FolderAccess {
    /// Creates every missing folder above the absolute path `path`, outermost first.
    func makeParents(of path: String) throws {
        var missing: [String] = []
        var p = String(Placement.parent(path))
        while !p.isEmpty, p != "/", LocalFiles.stamp(p) == nil {
            missing.append(p)
            p = String(Placement.parent(p))
        }
        for folder in missing.reversed() {
            let e = makeFolder(folder)
            guard e == 0 || e == EEXIST else { throw EngineError(.storageFailure, "cannot create folder \(folder): \(errnoText(e))") }
        }
    }
}

/// The text of an error number (a name too long for a folder says what to do about it: the
/// server keeps names no folder holds — another client's, a restore's suffix).
func errnoText(_ e: Int32) -> String {
    if e == ENAMETOOLONG { return "its name is longer than a folder holds (255 bytes); give it a shorter name on the server or another device" }
    return String(cString: strerror(e))
}
