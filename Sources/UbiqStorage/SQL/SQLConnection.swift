import Foundation

/// The SQL a store's statements are written in: SQLite's, with the few spellings that differ
/// asked of the dialect (placeholders are always `?`; a PostgreSQL connection numbers them).
public enum SQLDialect: Sendable {
    case sqlite, postgres

    /// The two-argument "larger of" function (`max(a, b)` in SQLite, `GREATEST` in PostgreSQL).
    public var greatest: String { self == .sqlite ? "max" : "GREATEST" }
}

/// One transaction's connection to a metadata database. Every call runs inside the transaction
/// a `SQLDatabase` opened; calls block (they run on the database's own threads, never on the
/// threads of Swift tasks).
public protocol SQLConnection: AnyObject {
    var dialect: SQLDialect { get }
    /// Runs a statement; returns how many rows it changed.
    @discardableResult
    func execute(_ sql: String, _ arguments: [any SQLArgument]) throws -> Int
    /// Runs a query and returns every row.
    func rows(_ sql: String, _ arguments: [any SQLArgument]) throws -> [SQLRow]
    /// Runs `body` in a savepoint: kept when it returns true, rolled back when it returns false
    /// or throws.
    func savepoint(_ body: () throws -> Bool) throws
    /// Holds the account's lock until the transaction ends: the writes of one account happen one
    /// after another (quota checks, chunk references, and change numbers committed in the order
    /// they were given). SQLite has one writer anyway; PostgreSQL locks the account's row.
    func lockAccount(_ id: Int64) throws
}

extension SQLConnection {
    @discardableResult
    func execute(_ sql: String) throws -> Int { try execute(sql, []) }

    func rows(_ sql: String) throws -> [SQLRow] { try rows(sql, []) }

    /// The first row, if any.
    func row(_ sql: String, _ arguments: [any SQLArgument] = []) throws -> SQLRow? { try rows(sql, arguments).first }

    /// The first column of the first row; nil when there is no row or the value is NULL.
    func value<T: SQLColumnValue>(_ sql: String, _ arguments: [any SQLArgument] = []) throws -> T? {
        guard let r = try row(sql, arguments) else { return nil }
        let v: T? = try r[0]
        return v
    }

    /// The first column of every row.
    func values<T: SQLColumnValue>(_ sql: String, _ arguments: [any SQLArgument] = []) throws -> [T] {
        try rows(sql, arguments).map { try $0[0] }
    }
}

/// A metadata database: transactions that run a body on a connection of their own.
public protocol SQLDatabase: Sendable {
    /// Runs `body` in a read-only transaction that sees one state of the database throughout.
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T
    /// Runs `body` in a write transaction, committed when it returns and rolled back when it
    /// throws. A failure of the database itself throws `storage_failure`.
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T
    /// Runs `body`'s statements each on its own (see the default). A requirement, so that a
    /// call through `any SQLDatabase` reaches PostgreSQL's own (an extension's method alone is
    /// chosen statically: every such read paid `BEGIN` and `COMMIT` until this was one).
    func readEach<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T
    /// Lets go of the database's connections (a closed database refuses transactions).
    func close() async
}

extension SQLDatabase {
    public func close() async {}

    /// Runs `body`'s statements each on its own, outside a transaction: for reads that need not
    /// see one state of the database throughout (one statement; look-ups each complete in
    /// itself). On PostgreSQL that saves the round trips of `BEGIN` and `COMMIT` — a token's
    /// check before every request is one statement. Elsewhere it is `read`.
    public func readEach<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await read(body)
    }
}
