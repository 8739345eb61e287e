import Foundation
#if canImport(Glibc)
import Glibc
import UbiqDaemonProtocol
#endif

/// One process at a time on a folder: an exclusive `flock` on a lock file in it, released
/// when the process exits (even by kill -9). One engine per home (`<state>/engine.lock`);
/// one server per data folder (`<data>/server.lock`).
public final class HomeLock: @unchecked Sendable {
    let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// Takes the home's engine lock, or returns nil if another process holds it.
    public static func acquire(_ home: DeviceHome) throws -> HomeLock? {
        try FileManager.default.createDirectory(at: home.stateDirectory, withIntermediateDirectories: true)
        return try acquire(file: home.lockFile)
    }

    /// Takes the lock on `file` (created if needed; its folder must exist), or returns nil
    /// if another process holds it.
    public static func acquire(file: URL) throws -> HomeLock? {
        let fd = open(file.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw EngineError(.storageFailure, "cannot open \(file.path): \(String(cString: strerror(errno)))") }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            close(fd)
            return nil
        }
        return HomeLock(fd: fd)
    }

    deinit { flock(fd, LOCK_UN); close(fd) }
}
