import Foundation
import Logging
import NIOCore
import PostgresNIO

/// One PostgreSQL connection inside a transaction, as a `SQLConnection`: `?` placeholders
/// numbered (`$1`, `$2`, …), values bound and read in the schema's few types. Statements block
/// on their answers (the caller is a thread of `PostgreSQLDatabase`'s pool).
final class PGConnection: SQLConnection {
    let connection: PostgresConnection
    let logger: Logger
    /// How long a statement may wait for its answer (nil: as long as it takes).
    let deadline: TimeAmount?
    var dialect: SQLDialect { .postgres }

    init(_ connection: PostgresConnection, _ logger: Logger, deadline: TimeAmount? = nil) {
        self.connection = connection; self.logger = logger; self.deadline = deadline
    }

    @discardableResult
    func execute(_ sql: String, _ arguments: [any SQLArgument]) throws -> Int {
        try query(sql, arguments).metadata.rows ?? 0
    }

    func rows(_ sql: String, _ arguments: [any SQLArgument]) throws -> [SQLRow] {
        let result = try query(sql, arguments)
        guard let first = result.rows.first else { return [] }
        let columns = SQLColumns(first.map(\.columnName))
        return try result.rows.map { row in SQLRow(columns: columns, values: try row.map(Self.value)) }
    }

    func savepoint(_ body: () throws -> Bool) throws {
        try execute("SAVEPOINT ubiq_step")
        let keep: Bool
        do { keep = try body() } catch {
            _ = try? execute("ROLLBACK TO SAVEPOINT ubiq_step")
            throw error
        }
        try execute(keep ? "RELEASE SAVEPOINT ubiq_step" : "ROLLBACK TO SAVEPOINT ubiq_step")
    }

    func lockAccount(_ id: Int64) throws {
        _ = try rows("SELECT id FROM accounts WHERE id = ? FOR UPDATE", [id])
    }

    private func query(_ sql: String, _ arguments: [any SQLArgument]) throws -> PostgresQueryResult {
        var binds = PostgresBindings(capacity: arguments.count)
        for a in arguments {
            switch a.sqlValue {
            case .null: binds.appendNull()
            case .integer(let i): binds.append(i)
            case .real(let d): binds.append(d)
            case .text(let s): binds.append(s)
            case .blob(let b): binds.append(ByteBuffer(bytes: b))
            }
        }
        guard arguments.count <= Int(UInt16.max) else { throw StorageError(.internalError, "a statement with \(arguments.count) arguments") }
        // PostgresNIO loses a statement written to a connection the server already closed (its
        // answer never comes: a pooled connection whose server restarted would hang its thread
        // for ever), so the answer is also given up when the connection closes.
        let flight = InFlight.of(connection)
        let answer = connection.eventLoop.makePromise(of: PostgresQueryResult.self)
        guard flight.begin(answer) else {
            // Closed already: the promise is failed before it goes (an unfulfilled promise is a
            // leak, and a debug build stops the process on one).
            answer.fail(ChannelError.ioOnClosedChannel)
            throw ChannelError.ioOnClosedChannel
        }
        defer { flight.end() }
        // A server that stops answering without closing (a partition, a frozen host) would hold
        // the thread as long: past the deadline the connection is closed, which ends the wait.
        let expired = ExpiryFlag()
        let connection = self.connection
        let timer = deadline.map { d in
            connection.eventLoop.scheduleTask(in: d) {
                expired.set()
                let _: EventLoopFuture<Void> = connection.close()
            }
        }
        defer { timer?.cancel() }
        connection.query(PostgresQuery(unsafeSQL: Self.numbered(sql), binds: binds), logger: logger).cascade(to: answer)
        do {
            return try answer.futureResult.wait()
        } catch {
            if expired.isSet, let d = deadline { throw StatementTimeout(seconds: Int(d.nanoseconds / 1_000_000_000)) }
            throw error
        }
    }

    /// `sql` with each `?` outside quotes replaced by `$1`, `$2`, … in order.
    static func numbered(_ sql: String) -> String {
        var out = ""
        out.reserveCapacity(sql.utf8.count + 16)
        var n = 0
        var quoted = false
        for ch in sql {
            if ch == "'" { quoted.toggle() }
            if ch == "?" && !quoted {
                n += 1
                out += "$\(n)"
            } else {
                out.append(ch)
            }
        }
        return out
    }

    static func value(_ cell: PostgresCell) throws -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8, .oid: return .integer(try cell.decode(Int64.self))
        case .float4, .float8: return .real(try cell.decode(Double.self))
        case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .bytea: return .blob(Data(try cell.decode(ByteBuffer.self).readableBytesView))
        case .numeric:
            let d = try cell.decode(Decimal.self)
            let n = NSDecimalNumber(decimal: d)
            if d == Decimal(n.int64Value) { return .integer(n.int64Value) }
            return .real(n.doubleValue)
        default: return .text(try cell.decode(String.self))
        }
    }
}

/// Set once a statement's deadline passed (by the event loop; read by the waiting thread).
final class ExpiryFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// A statement got no answer within its deadline; its connection was closed.
struct StatementTimeout: Error {
    let seconds: Int
}

/// What a PostgreSQL failure means to a transaction: run it again, or report it.
enum PGFailure {
    static func sqlState(_ error: Error) -> String? { (error as? PSQLError)?.serverInfo?[.sqlState] }

    /// The connection is gone (the server restarted, the network dropped, or it never connected).
    static func connectionLost(_ error: Error) -> Bool {
        if let e = error as? PSQLError {
            switch e.code {
            case .serverClosedConnection, .connectionError, .uncleanShutdown, .clientClosedConnection: return true
            default: break
            }
        }
        if let state = sqlState(error) { return state.hasPrefix("08") || state.hasPrefix("57P") }
        return error is ChannelError || error is IOError || error is NIOConnectionError
    }

    /// Worth running the whole transaction again: a lost race or a lost connection.
    static func retryable(_ error: Error) -> Bool {
        if connectionLost(error) { return true }
        switch sqlState(error) {
        case "40001", "40P01", "23505": return true  // serialization failure, deadlock, a key another transaction just took
        default: return false
        }
    }

    static func storageError(_ error: Error, location: PostgreSQLLocation, committing: Bool) -> StorageError {
        if committing {
            return StorageError(.storageFailure, "the connection to the database was lost while committing; the change may or may not have been kept")
        }
        if let t = error as? StatementTimeout {
            return StorageError(.storageFailure, "the database at \(location.redacted) did not answer within \(t.seconds) s")
        }
        if let e = error as? PSQLError {
            // 54000: a path whose index entry is over PostgreSQL's B-tree limit (2,704 bytes
            // after compression) — the request's fault, not the database's: said, not retried.
            if e.serverInfo?[.sqlState] == "54000", let message = e.serverInfo?[.message], message.contains("index row") {
                return StorageError(.invalidPath, "the path is too long for this server's PostgreSQL index (about 2,700 bytes on the server; an encrypted account's names are a third longer there): give it a shorter name or fewer folders")
            }
            if let message = e.serverInfo?[.message] {
                return StorageError(.storageFailure, "database error \(e.serverInfo?[.sqlState] ?? ""): \(message)")
            }
            if connectionLost(error) || e.code == .server {
                return StorageError(.storageFailure, "cannot reach the database at \(location.redacted)")
            }
            return StorageError(.storageFailure, "database error: \(e.code)")
        }
        if connectionLost(error) { return StorageError(.storageFailure, "cannot reach the database at \(location.redacted): \(error)") }
        return StorageError(.storageFailure, "database error: \(error)")
    }
}

/// The statement a connection is waiting on, failed when the connection closes: one watcher per
/// connection (registered on its close future once, forgotten when it closes), not one per
/// statement.
final class InFlight: @unchecked Sendable {
    private let lock = NSLock()
    private var current: EventLoopPromise<PostgresQueryResult>?
    private var closed = false

    /// Records the statement's answer; false when the connection has closed already.
    func begin(_ answer: EventLoopPromise<PostgresQueryResult>) -> Bool {
        lock.withLock {
            guard !closed else { return false }
            current = answer
            return true
        }
    }

    func end() { lock.withLock { current = nil } }

    func connectionClosed() {
        let waiting = lock.withLock { () -> EventLoopPromise<PostgresQueryResult>? in
            closed = true
            defer { current = nil }
            return current
        }
        waiting?.fail(ChannelError.ioOnClosedChannel)
    }

    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var registry: [ObjectIdentifier: InFlight] = [:]

    /// The watcher of `connection` (made, and its close watched, on first use).
    static func of(_ connection: PostgresConnection) -> InFlight {
        let id = ObjectIdentifier(connection)
        let (flight, made) = registryLock.withLock { () -> (InFlight, Bool) in
            if let f = registry[id] { return (f, false) }
            let f = InFlight()
            registry[id] = f
            return (f, true)
        }
        if made {
            // Outside the lock: on a closed connection the callback runs at once.
            connection.closeFuture.whenComplete { _ in
                flight.connectionClosed()
                registryLock.withLock { if registry[id] === flight { registry[id] = nil } }
            }
        }
        return flight
    }
}
