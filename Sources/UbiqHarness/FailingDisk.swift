import Foundation
import UbiqEngine
#if canImport(Glibc)
import Glibc
#endif

/// A folder whose file system fails when told to, put in place of a device's disk: while
/// failing, a seeded share of the engine's changes to the folder fail as a full or failing disk
/// makes them fail (`ENOSPC`, `EIO`), changing nothing; the rest go through to the kernel.
public final class FailingDisk: FolderAccess, @unchecked Sendable {
    private let real = SystemFolder()
    private let lock = NSLock()
    private var rng: SeededRandom
    private let rate: Double
    private var failing = false
    /// Which calls may fail (by operation and path); nil: all.
    private var only: (@Sendable (_ operation: String, _ path: String) -> Bool)?
    /// Each failed call, in order: `"rename ENOSPC"`, …
    private(set) public var failed: [String] = []

    /// `rate`: the share of calls that fail while failing.
    public init(seed: UInt64, rate: Double) {
        self.rng = SeededRandom(seed: seed)
        self.rate = rate
    }

    /// Starts (or stops) failing: a test lets the devices converge afterwards. `only` picks the
    /// calls that may fail, by operation (`mkdir`, `rmdir`, `unlink`, `rename`) and path (the
    /// source of a rename).
    public func setFailing(_ on: Bool, only: (@Sendable (_ operation: String, _ path: String) -> Bool)? = nil) {
        lock.withLock { failing = on; self.only = only }
    }

    public var failedCount: Int { lock.withLock { failed.count } }

    private func fault(_ what: String, _ path: String) -> Int32? {
        lock.withLock {
            guard failing, only?(what, path) ?? true, Double.random(in: 0..<1, using: &rng) < rate else { return nil }
            let e = Bool.random(using: &rng) ? ENOSPC : EIO
            failed.append("\(what) \(e == ENOSPC ? "ENOSPC" : "EIO")")
            return e
        }
    }

    public func makeFolder(_ path: String) -> Int32 { fault("mkdir", path) ?? real.makeFolder(path) }
    public func removeFolder(_ path: String) -> Int32 { fault("rmdir", path) ?? real.removeFolder(path) }
    public func removeFile(_ path: String) -> Int32 { fault("unlink", path) ?? real.removeFile(path) }
    public func rename(_ from: String, _ to: String, _ mode: RenameMode) -> Int32 { fault("rename", from) ?? real.rename(from, to, mode) }
}
