import Foundation

/// Failed logins counted across the servers of a shared database, so a guesser spreading
/// attempts over them gets the allowance once, not once per server.
public protocol FailureLog: Sendable {
    /// How many failures each of `keys` had since `since`.
    func recent(_ keys: [String], since: Date) async throws -> [String: Int]
    /// Counts a failure for each of `keys` at `at`, and forgets failures from before `pruneBefore`.
    func record(_ keys: [String], at: Date, pruneBefore: Date) async throws
    /// Forgets a key's failures (a login that succeeded).
    func clear(_ key: String) async throws
}

/// `FailureLog` in the PostgreSQL metadata database (`login_failures`).
public struct PostgreSQLFailureLog: FailureLog {
    let database: PostgreSQLDatabase

    public init(database: PostgreSQLDatabase) { self.database = database }

    public func recent(_ keys: [String], since: Date) async throws -> [String: Int] {
        guard !keys.isEmpty else { return [:] }
        return try await database.read { db in
            var out: [String: Int] = [:]
            let args: [any SQLArgument] = [since.timeIntervalSince1970] + keys.map { $0 as any SQLArgument }
            for r in try db.rows("SELECT key, COUNT(*) FROM login_failures WHERE at >= ? AND key IN (\(SQLBatch.marks(keys.count))) GROUP BY key", args) {
                out[try r[0]] = try r[1]
            }
            return out
        }
    }

    public func record(_ keys: [String], at: Date, pruneBefore: Date) async throws {
        try await database.write { db in
            try db.insertMany("INSERT INTO login_failures (key, at)", width: 2, count: keys.count) { i in [keys[i], at.timeIntervalSince1970] }
            try db.execute("DELETE FROM login_failures WHERE at < ?", [pruneBefore.timeIntervalSince1970])
        }
    }

    public func clear(_ key: String) async throws {
        try await database.write { db in _ = try db.execute("DELETE FROM login_failures WHERE key = ?", [key]) }
    }
}
