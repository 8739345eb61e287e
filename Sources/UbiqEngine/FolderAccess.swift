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
}

/// The folder as the kernel has it.
public struct SystemFolder: FolderAccess {
    public init() {}

    public func makeFolder(_ path: String) -> Int32 { mkdir(path, 0o755) == 0 ? 0 : errno }
    public func removeFolder(_ path: String) -> Int32 { rmdir(path) == 0 ? 0 : errno }
    public func removeFile(_ path: String) -> Int32 { unlink(path) == 0 ? 0 : errno }
    public func rename(_ from: String, _ to: String, _ mode: RenameMode) -> Int32 {
        let r: Int32
        switch mode {
        case .replace: r = Glibc.rename(from, to)
        case .noReplace: r = ubiq_rename_noreplace(from, to)
        case .exchange: r = ubiq_rename_exchange(from, to)
        }
        return r == 0 ? 0 : errno
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

/// The text of an error number.
func errnoText(_ e: Int32) -> String { String(cString: strerror(e)) }
