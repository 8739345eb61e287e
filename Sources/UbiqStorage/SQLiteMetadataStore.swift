import Foundation
import GRDB
import UbiqCore

/// The embedded metadata store: one SQLite file (WAL, foreign keys on) through GRDB.
public final class SQLiteMetadataStore: Sendable {
    let pool: DatabasePool

    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    public init(path: String) throws {
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(10)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            // Savepoint journals (one per commit in a batch) stay in memory: on disk they were
            // ~27 MB of temp-file writes per batch of 500 commits, a quarter of all syscalls.
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
        do {
            pool = try DatabasePool(path: path, configuration: config)
            try Self.migrator.migrate(pool)
        } catch let e as DatabaseError {
            throw StorageError(.storageFailure, "cannot open the database at \(path): \(e.message ?? "\(e.resultCode)")")
        }
    }

    /// Runs a write transaction, mapping SQLite failures to `storage_failure`.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.write(body)
        } catch let e as DatabaseError {
            throw StorageError(.storageFailure, "database error: \(e.message ?? "\(e.resultCode)")")
        }
    }

    /// Runs a read, mapping SQLite failures to `storage_failure`.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.read(body)
        } catch let e as DatabaseError {
            throw StorageError(.storageFailure, "database error: \(e.message ?? "\(e.resultCode)")")
        }
    }
}
