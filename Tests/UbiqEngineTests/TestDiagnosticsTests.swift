import Foundation
import Glibc
import Testing
import UbiqTesting

/// The test harness's own diagnostics: a bounded wait that runs out shows what the test's
/// engines and server were doing (their recent log lines), so a failure seen once on a loaded
/// CI box can be understood from its output.
@Suite("Test diagnostics")
struct TestDiagnosticsTests {
    @Test func theRecentLogsOfATestsDevicesAndServerAreAtHand() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/one.txt", "one")
            #expect(await eventually { b.read("Documents/one.txt") == "one" })
            await b.engine.syncNow()
            let dump = TestRings.dumpForCurrentTest()
            // Each of the test's rings, with what it logged: the engines' passes, the requests.
            #expect(dump.contains("--- device A: last") && dump.contains("--- device B: last") && dump.contains("--- server: last"), "\(dump.prefix(300))")
            #expect(b.log.recent.contains { $0.contains("pass:") }, "B's passes are logged at debug level")
            #expect(dump.contains("POST /v1/containers/{container}/commit 200"), "the server's requests are kept")
        }
    }
}

/// A test marked `.ownThreads` may block its threads (as waiting for a child process does)
/// without stalling the rest of the process: more blocked waits than the machine has cores, and
/// a task on Swift's shared pool still runs meanwhile.
@Suite("Tests on threads of their own", .ownThreads)
struct OwnThreadsTests {
    @Test func blockedWaitsLeaveTheSharedPoolFree() async {
        let width = ProcessInfo.processInfo.activeProcessorCount + 2
        // Each blocks its thread, as `ChildProcess.wait` does, until the shared pool's task has
        // run (60 s at most: the pool may be busy with other tests' work).
        let ran = await sharedPoolRanWhileBusy(width: width) { ran in for _ in 0..<6000 where !ran() { usleep(10_000) } }
        #expect(ran, "a task on the shared pool ran while \(width) tests' threads were blocked")
    }
}
