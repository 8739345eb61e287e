import Foundation

/// Runs blocking file work (writes past the page cache, fsync, disk reads) on threads of its
/// own, so it never holds one of the few threads (one per core) that run every Swift task of the
/// process: a 16 MiB direct write and its fsync block for tens of milliseconds, and the request
/// handlers, the push channel and — in one process — the devices' transfers would wait behind it.
enum BlockingIO {
    /// Serial queues run on threads of their own (they are never capped at the core count);
    /// a few let several batches be written and read at once.
    private static let queues = (0..<4).map { DispatchQueue(label: "ubiq.storage.io.\($0)") }
    private static let turn = Turn()

    /// `body`'s result, computed on one of the I/O threads.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let queue = queues[turn.next() % queues.count]
        return try await withCheckedThrowingContinuation { done in
            queue.async { done.resume(with: Result { try body() }) }
        }
    }

    /// A counter shared by the callers (which queue goes next).
    private final class Turn: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func next() -> Int { lock.lock(); defer { lock.unlock() }; n &+= 1; return n & Int.max }
    }
}
