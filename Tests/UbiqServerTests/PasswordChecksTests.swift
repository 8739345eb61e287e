import Foundation
import Testing
@testable import UbiqServer
import UbiqStorage
import UbiqTesting

/// The sign-in guards on their own: password hashing never holds the threads every request
/// shares, and the throttle counts a failure that the shared log has not shown yet.
@Suite("Password checks and the login throttle")
struct PasswordChecksTests {
    /// Work on the hashing threads — more of it at once than the machine has cores, each piece
    /// keeping a core busy as a hash does — leaves a task on Swift's shared pool free to run. When
    /// the hashing ran on that pool (or on an operation queue, which shares its threads on
    /// Linux), the task waited until the hashing was done.
    @Test func hashingLeavesTheSharedPoolFree() async throws {
        let width = ProcessInfo.processInfo.activeProcessorCount + 2
        let checks = PasswordChecks(threads: width)
        // Each keeps its thread's core busy, as a hash does, until the shared pool's task has run
        // (60 s at most). Busy, not blocked: dispatch adds threads for blocked ones.
        let ran = await sharedPoolRanWhileBusy(width: width) { ran in
            await checks.run {
                let end = ContinuousClock.now + .seconds(60)
                while !ran() && ContinuousClock.now < end {}
            }
        }
        #expect(ran, "a task on the shared pool ran while \(width) hashing threads were busy")
        // And the verifiers it makes are good ones.
        let record = try await checks.make("right")
        #expect(record.iterations == PasswordHasher.rounds && record.salt.count == 16)
        #expect(await checks.verify("right", against: record) == true)
        #expect(await checks.verify("wrong", against: record) == false)
        #expect(await checks.decoy() != nil)
    }

    /// Servers sharing a database count failures in it; a count read just before this server's
    /// latest failures were written must not let an attempt past the limit (40 guesses at once
    /// from one address got 11 checked, not 10).
    @Test func aFailureNotYetInTheSharedCountStillCounts() async {
        let throttle = LoginThrottle()
        let now = Date()
        let stale: [String: Int] = [:]  // the shared log has not seen any of them yet
        var tickets: [LoginThrottle.Ticket] = []
        for _ in 0..<10 {
            guard let t = await throttle.begin(user: "alice", address: "10.0.0.1", now: now, shared: stale) else { break }
            tickets.append(t)
        }
        #expect(tickets.count == 10)
        #expect(await throttle.begin(user: "alice", address: "10.0.0.1", now: now, shared: stale) == nil, "ten in flight")
        for t in tickets { await throttle.finish(t, success: false, now: now) }
        #expect(await throttle.begin(user: "alice", address: "10.0.0.1", now: now, shared: stale) == nil,
                "ten failures here, though the shared count does not show them yet")
        // Elsewhere the user is not locked out; a minute later the address may try again.
        #expect(await throttle.begin(user: "alice", address: "10.0.0.2", now: now, shared: stale) != nil)
        #expect(await throttle.begin(user: "alice", address: "10.0.0.1", now: now.addingTimeInterval(61), shared: stale) != nil)
    }
}
