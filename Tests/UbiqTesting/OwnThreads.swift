import Foundation
import Testing

/// Runs a test's body on threads of its own instead of Swift's cooperative pool.
///
/// Some test helpers wait by blocking their thread: `ChildProcess.wait` and `waitForOutput`
/// (a `ubiq` command, a server or daemon starting), `TmuxSession.waitFor` (a screen), a private
/// PostgreSQL starting. The cooperative pool has one thread per core — two on the CI machine —
/// and every test of the process shares it with every in-process server and engine task: two
/// such waits at once stalled all of them (a device missed a 30 s bound on CI while two command-
/// line tests waited for their `ubiq` child). A suite or test marked `.ownThreads` runs its body
/// on `WaitingThreads`, where a blocked thread is one of many and the shared pool stays free.
/// (`UBIQ_OWN_THREADS=0` runs them on the shared pool as before, to compare.)
public struct OwnThreads: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard !test.isSuite, ProcessInfo.processInfo.environment["UBIQ_OWN_THREADS"] != "0" else { return try await function() }
        try await withTaskExecutorPreference(WaitingThreads.shared) { try await function() }
    }
}

extension Trait where Self == OwnThreads {
    /// The test's body runs on threads of its own (see `OwnThreads`).
    public static var ownThreads: Self { OwnThreads() }
}

/// A task executor on a pool of plain threads (up to `limit`, made as jobs wait for one, kept
/// while idle): jobs that block a thread hold only that one.
public final class WaitingThreads: TaskExecutor, @unchecked Sendable {
    public static let shared = WaitingThreads(limit: 64)

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var idle = 0
    private var threads = 0
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        let waiting = jobs.count - head
        let spawn = waiting > idle && threads < limit
        if spawn { threads += 1 }
        condition.signal()
        condition.unlock()
        if spawn {
            let t = Thread { [self] in work() }
            t.stackSize = 4 << 20
            t.name = "ubiq-test-waiting"
            t.start()
        }
    }

    private func work() {
        condition.lock()
        while true {
            while head == jobs.count {
                idle += 1
                condition.wait()
                idle -= 1
            }
            let job = jobs[head]
            head += 1
            if head == jobs.count { jobs.removeAll(keepingCapacity: true); head = 0 }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
            condition.lock()
        }
    }
}

/// Whether a task on Swift's shared pool ran while `width` pieces of `busy` work held their
/// threads. Each piece is handed `ran` and keeps its thread until `ran()` is true (or its own
/// limit passes: then it gave up, and the answer is false).
public func sharedPoolRanWhileBusy(width: Int, _ busy: @escaping @Sendable (_ ran: @escaping @Sendable () -> Bool) async -> Void) async -> Bool {
    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        func set() { lock.withLock { value = true } }
        var isSet: Bool { lock.withLock { value } }
    }
    let gaveUp = Flag(), sharedRan = Flag()
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<width {
            group.addTask {
                await busy { sharedRan.isSet }
                if !sharedRan.isSet { gaveUp.set() }
            }
        }
        Task.detached {
            try? await Task.sleep(for: .milliseconds(10))
            sharedRan.set()
        }
        await group.waitForAll()
    }
    return !gaveUp.isSet
}
