import Foundation
import Logging
import NIOCore
import NIOPosix
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
        // PostgresNIO sets metadata on the logger of every statement (and logs it at debug and
        // trace): a stream handler renders all its metadata again each time (~4 % of the server's
        // CPU in `ubiq-bench commits`). Below debug nothing of it is shown, so it gets a logger
        // that does nothing.
        self.connection = connection; self.logger = logger.logLevel > .debug ? Self.quiet : logger; self.deadline = deadline
    }

    /// The connection's watcher (looked up once a transaction, not once a statement).
    private lazy var flight = InFlight.of(connection)

    static let quiet = Logger(label: "ubiq.postgres.statement", factory: { _ in SwiftLogNoOpLogHandler() })

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
        // for ever), so the answer is also given up when the connection closes. A server that
        // stops answering without closing (a partition, a frozen host) would hold the thread as
        // long: `InFlight`'s watch closes it once the statement is past its deadline (one
        // periodic check of every connection in the process, not a timer set and cancelled on
        // the event loop for every statement — two wake-ups of the loop each).
        let flight = self.flight
        let answer = connection.eventLoop.makePromise(of: PostgresQueryResult.self)
        guard flight.begin(answer, by: deadline.map { NIODeadline.now() + $0 }) else {
            // Closed already: the promise is failed before it goes (an unfulfilled promise is a
            // leak, and a debug build stops the process on one).
            answer.fail(ChannelError.ioOnClosedChannel)
            throw ChannelError.ioOnClosedChannel
        }
        connection.query(PostgresQuery(unsafeSQL: Self.numbered(sql), binds: binds), logger: logger).cascade(to: answer)
        do {
            let result = try answer.futureResult.wait()
            flight.end()
            return result
        } catch {
            let expired = flight.end()
            if expired, let d = deadline { throw StatementTimeout(seconds: Int(d.nanoseconds / 1_000_000_000)) }
            throw error
        }
    }

    /// `sql` with each `?` outside quotes replaced by `$1`, `$2`, … in order (read as UTF-8
    /// bytes: `?` and `'` are ASCII and never part of another character's encoding).
    static func numbered(_ sql: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(sql.utf8.count + 16)
        var n = 0
        var quoted = false
        for byte in sql.utf8 {
            if byte == UInt8(ascii: "'") { quoted.toggle() }
            if byte == UInt8(ascii: "?") && !quoted {
                n += 1
                out.append(UInt8(ascii: "$"))
                out.append(contentsOf: String(n).utf8)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
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

/// The statement a connection is waiting on, failed when the connection closes, and the
/// connection closed when that statement is past its deadline: one watcher per connection
/// (registered on its close future once, forgotten when it closes), and one periodic check of
/// every connection's statement in the process (`checkAll(now:)`) — not a timer a statement, nor
/// one a connection (an idle pool would wake its event loops for nothing).
final class InFlight: @unchecked Sendable {
    private let lock = NSLock()
    private var current: EventLoopPromise<PostgresQueryResult>?
    private var expiresAt: NIODeadline?
    private var expired = false
    private var closed = false
    /// Closes the connection (the watch's way to end a wait past its deadline).
    private let close: @Sendable () -> Void
    /// How often the statements in flight are checked against their deadlines (a statement is
    /// given up at most this long after its deadline).
    static let checkEvery = TimeAmount.milliseconds(500)

    init(close: @escaping @Sendable () -> Void) { self.close = close }

    /// Records the statement's answer and deadline; false when the connection has closed already.
    func begin(_ answer: EventLoopPromise<PostgresQueryResult>, by deadline: NIODeadline?) -> Bool {
        lock.withLock {
            guard !closed else { return false }
            current = answer
            expiresAt = deadline
            expired = false
            return true
        }
    }

    /// The statement is over; true when its deadline had passed (its connection was closed).
    @discardableResult
    func end() -> Bool {
        lock.withLock {
            current = nil
            expiresAt = nil
            return expired
        }
    }

    /// True (once) when the statement waited on is past its deadline: the caller closes the
    /// connection, which fails the wait.
    func overdue(now: NIODeadline) -> Bool {
        lock.withLock {
            guard current != nil, !expired, let at = expiresAt, at <= now else { return false }
            expired = true
            return true
        }
    }

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
    nonisolated(unsafe) private static var watching: RepeatedTask?

    /// Closes the connection of every statement past its deadline.
    static func checkAll(now: NIODeadline) {
        let all = registryLock.withLock { Array(registry.values) }
        for flight in all where flight.overdue(now: now) { flight.close() }
    }

    /// The watcher of `connection` (made, and its close watched, on first use; the process's
    /// periodic check started with the first).
    static func of(_ connection: PostgresConnection) -> InFlight {
        let id = ObjectIdentifier(connection)
        let (flight, made) = registryLock.withLock { () -> (InFlight, Bool) in
            if let f = registry[id] { return (f, false) }
            let f = InFlight(close: { let _: EventLoopFuture<Void> = connection.close() })
            registry[id] = f
            if watching == nil {
                watching = MultiThreadedEventLoopGroup.singleton.next().scheduleRepeatedTask(initialDelay: checkEvery, delay: checkEvery) { _ in
                    checkAll(now: .now())
                }
            }
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
