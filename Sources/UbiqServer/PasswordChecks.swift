import Foundation
import UbiqStorage

/// Runs password hashing (PBKDF2, deliberately slow) on a few threads of its own, never on the
/// threads that serve requests, with a bounded queue: a flood of logins waits its turn or is
/// refused, and every other request is served meanwhile.
final class PasswordChecks: @unchecked Sendable {
    private let queue = OperationQueue()
    private let lock = NSLock()
    private var admitted = 0
    let maxQueued: Int

    init(threads: Int = max(1, ProcessInfo.processInfo.activeProcessorCount / 2), maxQueued: Int = 32) {
        queue.name = "ubiq.password-checks"
        queue.maxConcurrentOperationCount = threads
        self.maxQueued = maxQueued
    }

    /// True if `password` matches `record`; nil when too many checks are waiting already.
    func verify(_ password: String, against record: PasswordRecord) async -> Bool? {
        let room = lock.withLock {
            guard admitted < queue.maxConcurrentOperationCount + maxQueued else { return false }
            admitted += 1
            return true
        }
        guard room else { return nil }
        return await withCheckedContinuation { c in
            queue.addOperation {
                let ok = PasswordHasher.verify(password, against: record)
                self.lock.withLock { self.admitted -= 1 }
                c.resume(returning: ok)
            }
        }
    }
}
