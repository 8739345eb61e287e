import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Testing
@testable import UbiqStorage
import UbiqTesting

/// The PostgreSQL connection a statement runs on, at the edges of its life.
@Suite("PostgreSQL connection", .enabled(if: PostgresTestDatabase.runs))
struct PGConnectionTests {
    /// A statement on a connection already seen to close is refused with an error — the
    /// answer's promise failed, not dropped: an unfulfilled promise stopped a debug build's
    /// whole process (CI, a PostgreSQL test racing a connection's close).
    @Test func aStatementOnAConnectionSeenClosedIsRefusedNotLeaked() async throws {
        guard let location = try await PostgresTestDatabase.fresh() else { return }
        let db = try await PostgreSQLDatabase.open(location)
        let logger = Logger(label: "test.pg")
        let c = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: db.configuration, id: 1, logger: logger).get()
        // A connection of its own on each thread (PGConnection is not Sendable; both wrap `c`).
        let one: Int64? = try await offThePool { try PGConnection(c, logger).value("SELECT 1") }
        #expect(one == 1)
        // As the close watcher does the moment the connection closes (before it lets go of it).
        InFlight.of(c).connectionClosed()
        let refused = try await offThePool { () -> Bool in
            do { _ = try PGConnection(c, logger).execute("SELECT 1"); return false } catch { return error is ChannelError }
        }
        #expect(refused, "a statement on a closed connection was not refused")
        try await c.close()
        await db.close()
        await PostgresTestDatabase.drop(location)
    }

    /// A statement still unanswered past its deadline is given up: the process's watch (one
    /// periodic check of every connection, no timer a statement) closes the connection, and the waiting
    /// thread is told the deadline passed — well before the statement would have answered. A
    /// statement answered within its deadline is not touched, nor is the connection after it.
    @Test func aStatementPastItsDeadlineIsGivenUpAndSaysSo() async throws {
        guard let location = try await PostgresTestDatabase.fresh() else { return }
        let db = try await PostgreSQLDatabase.open(location)
        let logger = Logger(label: "test.pg")
        let c = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: db.configuration, id: 2, logger: logger).get()
        let quick: Int64? = try await offThePool { try PGConnection(c, logger, deadline: .seconds(1)).value("SELECT 7") }
        #expect(quick == 7)
        // Idle past the deadline between statements: the watch leaves an idle connection alone.
        try await Task.sleep(for: .milliseconds(1_300))
        #expect(!c.isClosed, "an idle connection was closed")
        let start = ContinuousClock.now
        let outcome = try await offThePool { () -> String in
            do { _ = try PGConnection(c, logger, deadline: .seconds(1)).execute("SELECT pg_sleep(20)"); return "answered" }
            catch let t as StatementTimeout { return "deadline \(t.seconds) s" }
            catch { return "\(error)" }
        }
        let took = ContinuousClock.now - start
        #expect(outcome == "deadline 1 s")
        #expect(took < .seconds(10), "given up \(took) after it was sent")
        #expect(c.isClosed)
        await db.close()
        await PostgresTestDatabase.drop(location)
    }
}
