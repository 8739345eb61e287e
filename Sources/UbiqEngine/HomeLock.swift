import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One engine per home: an exclusive `flock` on `<state>/engine.lock`, released when the
/// process exits (even by kill -9).
public final class HomeLock: @unchecked Sendable {
    let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// Takes the lock, or returns nil if another process holds it.
    public static func acquire(_ home: DeviceHome) throws -> HomeLock? {
        try FileManager.default.createDirectory(at: home.stateDirectory, withIntermediateDirectories: true)
        let fd = open(home.lockFile.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw EngineError(.storageFailure, "cannot open \(home.lockFile.path)") }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            close(fd)
            return nil
        }
        return HomeLock(fd: fd)
    }

    deinit { flock(fd, LOCK_UN); close(fd) }
}
