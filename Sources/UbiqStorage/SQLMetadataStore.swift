import Foundation
import Synchronization
import UbiqCore

/// The metadata store on a SQL database — the embedded SQLite file or a PostgreSQL server
/// (`SQLDatabase`): the same statements, schema and semantics on both.
public final class SQLMetadataStore: Sendable {
    /// Containers one account may have (each made on first use).
    public static let maxContainersPerAccount: Int64 = 256

    /// Deletes of purged items an account keeps for its devices' change feeds (the newest;
    /// older ones are forgotten behind each container's horizon, and a device whose feed
    /// reaches behind it reads the whole feed again). Settable for tests.
    public let deletesKept = Atomic<Int>(65_536)

    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    /// Opens (creating if needed) the embedded SQLite database at `path`.
    public convenience init(path: String) throws {
        self.init(database: try SQLiteDatabase(path: path))
    }

    /// Runs a write transaction.
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await database.write(body)
    }

    /// Runs a write transaction of one account's data, holding the account's lock throughout
    /// (`SQLConnection.lockAccount`).
    func write<T: Sendable>(account: Int64, _ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await database.write { db in
            try db.lockAccount(account)
            return try body(db)
        }
    }

    /// Runs a read transaction.
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await database.read(body)
    }

    /// Runs a read whose statements each stand alone (`SQLDatabase.readEach`).
    func readEach<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await database.readEach(body)
    }
}
