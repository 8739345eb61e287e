import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqServer
import UbiqStorage
import UbiqTesting

/// A PostgreSQL that stops answering without closing its connections (frozen with SIGSTOP: a
/// partition that sends no reset, a host that hangs): every request is answered with a clear
/// `storage_failure` in bounded time — the server never hangs on it — and once the database
/// answers again the server goes on by itself.
@Suite("PostgreSQL that stops answering", .enabled(if: PrivatePostgres.runs), .serialized, .ownThreads, .timeLimit(.minutes(5)))
struct FrozenDatabaseTests {
    /// `body` run `n` times at once: each run's outcome (`answered`, or `code: message (after T)`).
    static func answers(_ n: Int, _ body: @escaping @Sendable () async throws -> Void) async -> [String] {
        let t0 = ContinuousClock.now
        return await withTaskGroup(of: String.self) { group in
            for _ in 0..<n {
                group.addTask {
                    do {
                        try await body()
                        return "answered"
                    } catch {
                        let (code, message): (String, String) = switch error {
                        case let e as ClientError: (e.code.rawValue, e.message)
                        case let e as StorageError: (e.code.rawValue, e.message)
                        default: ("other", "\(error)")
                        }
                        return "\(code): \(message) (after \(ContinuousClock.now - t0))"
                    }
                }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
    }

    /// Whether `body` returned within `limit` (it is left running when it did not).
    static func finishes(within limit: Duration, _ body: @escaping @Sendable () async -> Void) async -> Bool {
        final class Once: @unchecked Sendable {
            let lock = NSLock()
            var continuation: CheckedContinuation<Bool, Never>?
            func finish(_ value: Bool) { lock.withLock { continuation.take() }?.resume(returning: value) }
        }
        let once = Once()
        return await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            once.lock.withLock { once.continuation = c }
            Task { await body(); once.finish(true) }
            Task { try? await Task.sleep(for: limit); once.finish(false) }
        }
    }

    @Test func requestsAreAnsweredInBoundedTimeAndTheServerRecovers() async throws {
        guard let pg = try PrivatePostgres.start() else { return }
        defer { pg.freeze(false); pg.destroy() }
        var location = try pg.location
        location.statementTimeout = 3
        location.connections = 4
        let server = try await TestServer.start(database: .postgres(location), blobs: StoreKind.folder.blobs)
        try await server.user("alice")
        let a = try await TestDevice.make(server, user: "alice", name: "A")
        try a.write("Documents/before.txt", "before the freeze")
        let (probe, _) = try await server.device("alice", name: "probe")
        #expect(await eventually { (try? await probe.account().used) ?? 0 > 0 })

        // The same database straight, on one connection: requests queue behind it.
        var one = location
        one.connections = 1
        let direct = try await PostgreSQLDatabase.open(one)

        pg.freeze(true)
        // Pooled connections hang in their statements (3 s), new ones in their start-up (15 s
        // for all attempts together), requests waiting for a connection are answered past 5 s:
        // five requests at once on a pool of four all come back as storage_failure.
        let t0 = ContinuousClock.now
        let answers = await Self.answers(5) { _ = try await probe.account() }
        let took = ContinuousClock.now - t0
        print("[frozen-db] 5 requests answered in \(took): \(answers)")
        #expect(answers.allSatisfy { $0.hasPrefix(ErrorCode.storageFailure.rawValue) }, "\(answers)")
        #expect(took < .seconds(40), "every request answered in bounded time: \(took)")

        // Six at once on one connection: the first waits out its statement, the next its
        // connection's start-up; the others, having waited longer than the queue's bound by then,
        // are answered at once instead of each waiting out a start-up of its own (> 80 s).
        let q0 = ContinuousClock.now
        let queued = await Self.answers(6) { _ = try await direct.read { db in try db.rows("SELECT 1", []) } }
        let queuedTook = ContinuousClock.now - q0
        print("[frozen-db] 6 queued transactions answered in \(queuedTook): \(queued)")
        #expect(queued.allSatisfy { $0.hasPrefix(ErrorCode.storageFailure.rawValue) }, "\(queued)")
        #expect(queued.contains { $0.contains("for a free connection") }, "\(queued)")
        #expect(queuedTook < .seconds(35), "the queue is bounded: \(queuedTook)")
        await direct.close()
        print("[frozen-db] direct connection closed")

        pg.freeze(false)
        let back = await eventually(timeout: .seconds(60)) { (try? await probe.account()) != nil }
        #expect(back, "the server goes on once the database answers")
        try a.write("Documents/after.txt", "after the freeze")
        let listed = await eventually(timeout: .seconds(60)) {
            guard let page = try? await probe.changes(a.config.container, after: 0) else { return false }
            return page.items.contains { $0.path.string == "Documents/after.txt" && $0.current?.size == "after the freeze".utf8.count }
        }
        #expect(listed, "a new file is stored after the freeze")
        print("[frozen-db] recovered")
        // A device's stop that never returned once held a whole CI run for 90 minutes (#45 §4,
        // the second clean-clone run of session 33: every thread idle after "recovered"). It is
        // bounded here so such a run fails with the engine's own last log lines instead.
        guard await Self.finishes(within: .seconds(120), { await a.stop() }) else {
            Issue.record("device A's engine did not stop within 120 s after the freeze; recent logs:\n\(TestRings.dumpForCurrentTest())")
            return
        }
        a.remove()
        print("[frozen-db] device stopped")
        await server.stop()
        print("[frozen-db] server stopped")
    }
}
