import Foundation
import GRDB

/// The embedded metadata database: one SQLite file (WAL, foreign keys on) through GRDB, with
/// its append-only migrations (`SQLiteSchema`).
public final class SQLiteDatabase: SQLDatabase {
    let pool: DatabasePool
    private let columns = ColumnCache()

    /// Opens (creating if needed) the database at `path` and applies `migrator`'s pending
    /// migrations (the metadata schema unless told otherwise).
    public convenience init(path: String) throws {
        try self.init(path: path, migrator: SQLiteSchema.migrator)
    }

    init(path: String, migrator: DatabaseMigrator) throws {
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
            try migrator.migrate(pool)
        } catch let e as DatabaseError {
            throw StorageError(.storageFailure, "cannot open the database at \(path): \(e.message ?? "\(e.resultCode)")")
        }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        let columns = self.columns
        return try await Self.mapped { try await pool.write { db in try body(GRDBConnection(db, columns)) } }
    }

    /// `body`'s result, a SQLite failure as `storage_failure`.
    static func mapped<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let e as DatabaseError {
            throw StorageError(.storageFailure, "database error: \(e.message ?? "\(e.resultCode)")")
        }
    }

    /// A read from synchronous code (the folder store's readers, on threads of their own).
    func readNow<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        let columns = self.columns
        do {
            return try pool.read { db in try body(GRDBConnection(db, columns)) }
        } catch let e as DatabaseError {
            throw StorageError(.storageFailure, "database error: \(e.message ?? "\(e.resultCode)")")
        }
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        let columns = self.columns
        return try await Self.mapped { try await pool.read { db in try body(GRDBConnection(db, columns)) } }
    }
}

/// Each statement's column names, made once (a statement's columns never change).
final class ColumnCache: @unchecked Sendable {
    private let lock = NSLock()
    private var known: [String: SQLColumns] = [:]

    func columns(_ sql: String, _ make: () -> [String]) -> SQLColumns {
        lock.lock(); defer { lock.unlock() }
        if let c = known[sql] { return c }
        let c = SQLColumns(make())
        if known.count > 2_000 { known.removeAll() }  // statements are few; never let odd ones pile up
        known[sql] = c
        return c
    }
}

/// A GRDB `Database` as a `SQLConnection` (statements cached by the connection, as before).
final class GRDBConnection: SQLConnection {
    let db: Database
    let columns: ColumnCache
    var dialect: SQLDialect { .sqlite }

    init(_ db: Database, _ columns: ColumnCache) { self.db = db; self.columns = columns }

    static func arguments(_ values: [any SQLArgument]) -> StatementArguments {
        StatementArguments(values.map { v -> DatabaseValue in
            switch v.sqlValue {
            case .null: .null
            case .integer(let i): i.databaseValue
            case .real(let d): d.databaseValue
            case .text(let s): s.databaseValue
            case .blob(let b): b.databaseValue
            }
        })
    }

    @discardableResult
    func execute(_ sql: String, _ arguments: [any SQLArgument]) throws -> Int {
        try db.cachedStatement(sql: sql).execute(arguments: Self.arguments(arguments))
        return db.changesCount
    }

    func rows(_ sql: String, _ arguments: [any SQLArgument]) throws -> [SQLRow] {
        let stmt = try db.cachedStatement(sql: sql)
        let cols = columns.columns(sql) { stmt.columnNames }
        let cursor = try Row.fetchCursor(stmt, arguments: Self.arguments(arguments))
        var out: [SQLRow] = []
        while let r = try cursor.next() {
            out.append(SQLRow(columns: cols, values: r.databaseValues.map { v in
                switch v.storage {
                case .null: .null
                case .int64(let i): .integer(i)
                case .double(let d): .real(d)
                case .string(let s): .text(s)
                case .blob(let b): .blob(b)
                }
            }))
        }
        return out
    }

    func savepoint(_ body: () throws -> Bool) throws {
        try db.inSavepoint { try body() ? .commit : .rollback }
    }

    func lockAccount(_ id: Int64) throws {}  // one writer at a time already
}
