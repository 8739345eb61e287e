import Foundation
import UbiqStorage

/// Password hashing (PBKDF2, 210,000 rounds: ~0.1 s of a core each) on threads of its own.
///
/// Swift's tasks — every request handler of the server — share a pool of one thread per core,
/// and so do concurrent dispatch and operation queues. Hashing there let a flood of sign-ins (or
/// an administrator adding users) hold that pool while every device's sync requests waited
/// behind it. Serial queues each get a thread of their own: the hashing waits for those, never
/// the pool. There is one such set of threads per process (one per two cores). Checks are
/// admitted up to `threads + maxQueued` at once; beyond, a login is told the server is busy.
final class PasswordChecks: @unchecked Sendable {
    private let queues: [DispatchQueue]
    private let lock = NSLock()
    private var admitted = 0
    private var turn = 0
    private var decoyRecord: PasswordRecord?
    let maxQueued: Int

    /// The hashing threads of the process: one per two cores, shared by every server in it (a
    /// test run holds a hundred; each with threads of its own let their hashing crowd out the
    /// threads that accept connections).
    static let processQueues = queues(max(1, ProcessInfo.processInfo.activeProcessorCount / 2))

    static func queues(_ n: Int) -> [DispatchQueue] { (0..<max(1, n)).map { DispatchQueue(label: "ubiq.password-checks.\($0)") } }

    /// Checks on the process's hashing threads.
    init(maxQueued: Int = 32) {
        queues = Self.processQueues
        self.maxQueued = maxQueued
    }

    /// Checks on `threads` hashing threads of their own.
    init(threads: Int, maxQueued: Int = 32) {
        queues = Self.queues(threads)
        self.maxQueued = maxQueued
    }

    /// True if `password` matches `record`; nil when too many checks are waiting already.
    func verify(_ password: String, against record: PasswordRecord) async -> Bool? {
        let room = lock.withLock {
            guard admitted < queues.count + maxQueued else { return false }
            admitted += 1
            return true
        }
        guard room else { return nil }
        let ok = await run { PasswordHasher.verify(password, against: record) }
        lock.withLock { admitted -= 1 }
        return ok
    }

    /// A new verifier for `password` (an account made, a password changed), hashed `rounds` times.
    func make(_ password: String, rounds: Int = PasswordHasher.rounds) async throws -> PasswordRecord {
        try await run { Result { try PasswordHasher.make(password, rounds: rounds) } }.get()
    }

    /// A verifier for a password nobody has (made once, on the hashing threads, as the server's
    /// accounts are), so a login for an unknown user costs the same time as one for a known user.
    func decoy(rounds: Int = PasswordHasher.rounds) async -> PasswordRecord? {
        if let d = lock.withLock({ decoyRecord }) { return d }
        let made = try? await make("decoy-\(UInt64.random(in: 0...UInt64.max))", rounds: rounds)
        return lock.withLock {
            if decoyRecord == nil { decoyRecord = made }
            return decoyRecord
        }
    }

    /// `body`'s result, computed on one of the hashing threads.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        let queue = lock.withLock {
            turn &+= 1
            return queues[turn % queues.count]
        }
        return await withCheckedContinuation { c in queue.async { c.resume(returning: body()) } }
    }
}
