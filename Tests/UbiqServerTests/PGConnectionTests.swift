import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Testing
@testable import UbiqStorage
import UbiqTesting

/// The PostgreSQL connection a statement runs on, at the edges of its life.
@Suite("PostgreSQL connection")
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
}
