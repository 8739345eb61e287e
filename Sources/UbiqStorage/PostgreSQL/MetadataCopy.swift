import Foundation
import UbiqCore

/// Copies an embedded server's metadata (its SQLite file) into an empty PostgreSQL database, in
/// one PostgreSQL transaction: all of it or nothing. Every table keeps its rows as they are —
/// IDs, change numbers, token hashes (devices keep their sign-in) — and the sequences continue
/// after the highest copied number.
public enum MetadataCopy {
    /// The tables in the order their references need, each with the key it is read in order of.
    static let tables: [(name: String, key: [String])] = [
        ("accounts", ["id"]), ("devices", ["account_id", "id"]), ("tokens", ["hash"]),
        ("account_chunks", ["account_id", "hash"]), ("containers", ["id"]), ("items", ["id"]),
        ("versions", ["id"]), ("version_chunks", ["version_id", "idx"]), ("changes", ["seq"]),
        ("kv_batches", ["seq"]), ("kv_entries", ["account_id", "store", "key"]), ("kv_horizon", ["account_id", "store"]),
        ("kv_history", ["account_id", "store", "key", "seq"]), ("account_keys", ["account_id", "name"]),
    ]
    /// Each table's numbering sequence (PostgreSQL's `BIGSERIAL`s).
    static let sequences: [(table: String, column: String)] = [
        ("accounts", "id"), ("containers", "id"), ("items", "id"), ("versions", "id"), ("changes", "seq"), ("kv_batches", "seq"),
    ]
    static let page = 2_000

    /// Rows copied, by table.
    public typealias Counts = [String: Int]

    /// Copies `source` into `target`, which must hold no account (`invalid_request` otherwise).
    public static func copy(from source: SQLiteDatabase, to target: PostgreSQLDatabase) async throws -> Counts {
        try await target.write { db in
            let existing: Int = try db.value("SELECT COUNT(*) FROM accounts") ?? 0
            guard existing == 0 else {
                throw StorageError(.invalidRequest, "the database \(target.location.redacted) already holds \(Counted.of(existing, "account")); migrate into an empty one")
            }
            var counts: Counts = [:]
            for (table, key) in tables {
                counts[table] = try copyTable(table, key: key, from: source, into: db)
            }
            // The folders' trigger counted each copied folder again: counted afresh.
            try db.execute(SQLQueries.recountEntries)
            for (table, column) in sequences {
                try db.execute("SELECT setval(pg_get_serial_sequence('\(table)', '\(column)'), GREATEST(1, (SELECT COALESCE(MAX(\(column)), 0) FROM \(table))), (SELECT COUNT(*) > 0 FROM \(table)))")
            }
            return counts
        }
    }

    /// Copies one table a page at a time (read in key order from SQLite, written 256 rows a
    /// statement); returns how many rows.
    static func copyTable(_ table: String, key: [String], from source: SQLiteDatabase, into db: any SQLConnection) throws -> Int {
        var after: [SQLValue]?
        var copied = 0
        let keyList = key.joined(separator: ", ")
        while true {
            let rows: [SQLRow] = try source.readNow { src in
                if let after {
                    return try src.rows("SELECT * FROM \(table) WHERE (\(keyList)) > (\(SQLBatch.marks(key.count))) ORDER BY \(keyList) LIMIT \(page)", after)
                }
                return try src.rows("SELECT * FROM \(table) ORDER BY \(keyList) LIMIT \(page)")
            }
            guard let last = rows.last else { return copied }
            let columns = last.columns.names
            let quoted = columns.map { "\"\($0)\"" }.joined(separator: ", ")
            try db.insertMany("INSERT INTO \(table) (\(quoted))", width: columns.count, count: rows.count) { i in rows[i].values }
            copied += rows.count
            after = try key.map { k in
                guard let i = columns.firstIndex(of: k) else { throw StorageError(.internalError, "\(table) has no column \(k)") }
                return last.values[i]
            }
        }
    }

    /// Rows in each table of a database (to compare the copy with its source).
    public static func counts(_ db: any SQLDatabase) async throws -> Counts {
        try await db.read { c in
            var out: Counts = [:]
            for (table, _) in tables { out[table] = try c.value("SELECT COUNT(*) FROM \(table)") ?? 0 }
            return out
        }
    }
}
