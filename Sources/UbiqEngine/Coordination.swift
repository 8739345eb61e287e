import Foundation

/// Paths programs are reading or writing under coordination (`FileCoordinator`): while a
/// program holds a path, the engine does not upload what is there (a half-written state), does
/// not replace or move it with a download or another device's change, and does not touch the
/// folders above it; it takes up the path again when the program lets go. Holds are in memory
/// and tied to the program's connection, so a program that dies lets go. Thread-safe: downloads
/// check it off the engine's queue, just before their renames.
public final class Coordination: @unchecked Sendable {
    private let lock = NSLock()
    private var holds: [UInt64: (path: String, writing: Bool)] = [:]
    private var next: UInt64 = 0

    public init() {}

    /// Holds `path` (container-relative); returns the token `leave` takes.
    public func enter(_ path: String, writing: Bool) -> UInt64 {
        lock.withLock {
            next += 1
            holds[next] = (path, writing)
            return next
        }
    }

    public func leave(_ token: UInt64) { _ = lock.withLock { holds.removeValue(forKey: token) } }

    /// Whether anything is held (the common case is no: one check, no path work).
    public var isEmpty: Bool { lock.withLock { holds.isEmpty } }

    /// True when `path` is held, is inside a held folder, or holds a held path (a folder above
    /// it): nothing may change there.
    public func covers(_ path: String) -> Bool {
        lock.withLock { holds.values.contains { Self.related(path, $0.path) } }
    }

    /// True when a program is writing `path` (or a folder holding it) under coordination: what
    /// is there now may be half-written.
    public func beingWritten(_ path: String) -> Bool {
        lock.withLock { holds.values.contains { $0.writing && (path == $0.path || Self.inside(path, $0.path)) } }
    }

    static func inside(_ path: String, _ folder: String) -> Bool {
        path.utf8.count > folder.utf8.count && path.hasPrefix(folder) && path.utf8[path.utf8.index(path.utf8.startIndex, offsetBy: folder.utf8.count)] == UInt8(ascii: "/")
    }

    static func related(_ a: String, _ b: String) -> Bool { a == b || inside(a, b) || inside(b, a) }
}
