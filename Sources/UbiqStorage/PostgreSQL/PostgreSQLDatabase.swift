import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// A PostgreSQL metadata database (`--database postgres://…`): the same statements as the
/// embedded SQLite file, on a pool of connections. Each transaction runs on a thread of the
/// database's own pool with a connection of its own (statements block on their answers there,
/// never on the threads that run Swift tasks), as GRDB runs SQLite's.
///
/// Writes run at READ COMMITTED and take the account's row lock first
/// (`SQLConnection.lockAccount`), so one account's writes happen one after another: change
/// numbers commit in the order they were given (a reader at cursor N never misses a change
/// numbered below N that commits later), quota checks see every earlier upload. Reads run at
/// REPEATABLE READ (one state throughout). A transaction that loses a deadlock or a
/// serialization check, or whose connection was lost before COMMIT was sent, is run again on a
/// fresh connection (up to six times); a connection lost during COMMIT is reported (the commit
/// may or may not have landed — every write of a device is safe to repeat).
public final class PostgreSQLDatabase: SQLDatabase, @unchecked Sendable {
    public let location: PostgreSQLLocation
    let configuration: PostgresConnection.Configuration
    let threads: NIOThreadPool
    let logger: Logger
    private let lock = NSLock()
    private var idle: [PostgresConnection] = []
    private var nextID = 0
    private var closed = false
    /// How long a new connection may take, start-up and sign-in included.
    let connectBound: TimeAmount = .seconds(15)

    /// Connects, creates or upgrades the schema (`PostgreSQLSchema`), and returns the database.
    public static func open(_ location: PostgreSQLLocation, logger: Logger = Logger(label: "ubiq.postgres")) async throws -> PostgreSQLDatabase {
        let db = try PostgreSQLDatabase(location, logger: logger)
        do {
            try await db.onPool { try db.migrate() }
        } catch {
            await db.close()
            throw error
        }
        return db
    }

    init(_ location: PostgreSQLLocation, logger: Logger) throws {
        self.location = location
        self.logger = logger
        var tls = PostgresConnection.Configuration.TLS.disable
        if location.tls {
            var config = TLSConfiguration.makeClientConfiguration()
            if let root = location.rootCertificate { config.trustRoots = .file(root) }
            do { tls = .require(try NIOSSLContext(configuration: config)) } catch {
                throw StorageError(.invalidRequest, "--database: cannot set up TLS: \(error)")
            }
        }
        var configuration = PostgresConnection.Configuration(host: location.host, port: location.port, username: location.user,
                                                             password: location.password, database: location.database, tls: tls)
        configuration.options.connectTimeout = .seconds(5)
        self.configuration = configuration
        threads = NIOThreadPool(numberOfThreads: location.connections)
        threads.start()
    }

    /// A database let go without `close()` (a command that ends): its connections close in the
    /// background, each kept until it has (PostgresNIO insists), and its threads stop.
    deinit {
        guard !closed else { return }
        for c in idle { c.close().whenComplete { _ in withExtendedLifetime(c) {} } }
        threads.shutdownGracefully { _ in }
    }

    /// Closes every connection and stops the pool's threads.
    public func close() async {
        let connections: [PostgresConnection] = lock.withLock {
            closed = true
            defer { idle = [] }
            return idle
        }
        for c in connections { try? await c.close() }
        try? await threads.shutdownGracefully()
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await run { try self.transaction(readOnly: true, body) }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await run { try self.transaction(readOnly: false, body) }
    }

    public func readEach<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await run { try self.transaction(readOnly: true, alone: true, body) }
    }

    /// `body`'s result, computed on a pool thread. Not cut short by the calling task's
    /// cancellation: what `body` took (a connection, a lock) always comes back to its caller.
    func onPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await threads.runIfActive(eventLoop: MultiThreadedEventLoopGroup.singleton.next(), body).get()
    }

    /// How long a transaction may wait for a free connection before it is answered
    /// `storage_failure`: a database that stops answering holds every connection of the pool,
    /// and the requests queued behind them would otherwise wait one after another for as long
    /// as the deadlines of those ahead add up (past any client's patience).
    var queueBound: TimeAmount { .seconds(Int64(max(5, min(location.statementTimeout, 30)))) }

    private func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let queued = NIODeadline.now()
        let bound = queueBound
        let redacted = location.redacted
        do {
            return try await onPool {
                let waited = NIODeadline.now() - queued
                guard waited <= bound else {
                    throw StorageError(.storageFailure, "the database at \(redacted) is not answering: waited \(waited.nanoseconds / 1_000_000_000) s for a free connection")
                }
                return try body()
            }
        } catch let e as StorageError {
            throw e
        } catch is NIOThreadPoolError.ThreadPoolInactive {
            throw StorageError(.storageFailure, "the database at \(location.redacted) is closed")
        } catch {
            // A connection that could not be made (refused, timed out, too many clients): said as it is.
            throw PGFailure.storageError(error, location: location, committing: false)
        }
    }

    /// Runs `body` in a transaction on a pooled connection (on a pool thread), again when it
    /// lost a race it may retry (see the type's notes).
    /// `bounded`: each statement has the location's deadline (schema upgrades are not bounded).
    /// `alone`: no transaction — each of `body`'s statements is one of its own (`readEach`).
    func transaction<T>(readOnly: Bool, bounded: Bool = true, alone: Bool = false, _ body: (any SQLConnection) throws -> T) throws -> T {
        let deadline: TimeAmount? = bounded ? .seconds(Int64(location.statementTimeout)) : nil
        // Connecting, again after a lost connection included, takes at most `connectBound` in
        // all: a database that takes connections but never answers (frozen, partitioned) is not
        // waited for once per attempt.
        let connectBy = NIODeadline.now() + connectBound
        var attempt = 0
        while true {
            attempt += 1
            var committing = false
            var connection: PostgresConnection?
            do {
                let c = try checkout(connectBy: connectBy)
                connection = c
                let db = PGConnection(c, logger, deadline: deadline)
                if !alone { try db.execute(readOnly ? "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY" : "BEGIN") }
                let result = try body(db)
                committing = !alone
                if !alone { try db.execute("COMMIT") }
                checkin(c)
                return result
            } catch {
                if let c = connection {
                    if c.isClosed || PGFailure.connectionLost(error) || error is StatementTimeout {
                        discard(c)
                    } else if alone {
                        checkin(c)
                    } else if (try? PGConnection(c, logger, deadline: deadline).execute("ROLLBACK")) != nil {
                        checkin(c)
                    } else {
                        discard(c)
                    }
                }
                if let e = error as? StorageError { throw e }
                if attempt < 6, !committing, PGFailure.retryable(error), NIODeadline.now() < connectBy {
                    Thread.sleep(forTimeInterval: min(2.0, 0.025 * Double(1 << attempt)) * Double.random(in: 0.5...1.0))
                    continue
                }
                throw PGFailure.storageError(error, location: location, committing: committing)
            }
        }
    }

    /// An idle connection of the pool, or a new one made by `connectBy` (default: within
    /// `connectBound` from now).
    func checkout(connectBy: NIODeadline? = nil) throws -> PostgresConnection {
        let connectBy = connectBy ?? NIODeadline.now() + connectBound
        while true {
            let (reused, id): (PostgresConnection?, Int) = try lock.withLock {
                guard !closed else { throw StorageError(.storageFailure, "the database at \(location.redacted) is closed") }
                if let c = idle.popLast() { return (c, 0) }
                nextID += 1
                return (nil, nextID)
            }
            guard let reused else { return try connect(id: id, by: connectBy) }
            if !reused.isClosed { return reused }
            discard(reused)  // the server ended it while it was idle (a restart)
        }
    }

    /// A new connection, or a failure by `deadline` (a server that takes the TCP connection but
    /// never answers its start-up — one shutting down, or frozen — fails it too).
    private func connect(id: Int, by deadline: NIODeadline) throws -> PostgresConnection {
        let bound = connectBound
        let redacted = location.redacted
        guard deadline > NIODeadline.now() else {
            throw StorageError(.storageFailure, "the database at \(redacted) did not answer in \(bound.nanoseconds / 1_000_000_000) s")
        }
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let made = loop.makePromise(of: PostgresConnection.self)
        // Both callbacks run on `loop`, one after the other: the first to come decides.
        final class Decided: @unchecked Sendable { var yes = false }
        let decided = Decided()
        let timer = loop.scheduleTask(deadline: deadline) {
            decided.yes = true
            made.fail(StorageError(.storageFailure, "the database at \(redacted) did not answer in \(bound.nanoseconds / 1_000_000_000) s"))
        }
        PostgresConnection.connect(on: loop, configuration: configuration, id: id, logger: logger).whenComplete { result in
            timer.cancel()
            switch result {
            case .success(let c) where decided.yes:
                c.close().whenComplete { _ in withExtendedLifetime(c) {} }  // too late: given up on
            case .success(let c): made.succeed(c)
            case .failure(let e): made.fail(e)
            }
            decided.yes = true
        }
        return try made.futureResult.wait()
    }

    func checkin(_ c: PostgresConnection) {
        let keep = lock.withLock { () -> Bool in
            guard !closed, !c.isClosed else { return false }
            idle.append(c)
            return true
        }
        if !keep { discard(c) }
    }

    /// Closes a connection and waits until it is (on a pool thread, never an event loop's).
    func discard(_ c: PostgresConnection) {
        _ = try? c.close().wait()
    }
}

extension PostgreSQLDatabase {
    /// Runs `statements` one by one on a connection of their own, outside any transaction
    /// (`CREATE DATABASE`, `DROP DATABASE` — for tools and tests).
    public static func administer(_ location: PostgreSQLLocation, _ statements: [String], logger: Logger = Logger(label: "ubiq.postgres")) async throws {
        let db = try PostgreSQLDatabase(location, logger: logger)
        defer { Task { await db.close() } }
        try await db.run {
            let c = try db.checkout()
            defer { db.discard(c) }
            do {
                for s in statements { try PGConnection(c, logger).execute(s) }
            } catch {
                throw PGFailure.storageError(error, location: location, committing: false)
            }
        }
    }
}

extension PostgreSQLDatabase {
    /// Sends `payload` to every session listening on `channel` (the other servers).
    public func notify(_ channel: String, _ payload: String) async throws {
        _ = try await run { try self.transaction(readOnly: false, alone: true) { db in try db.execute("SELECT pg_notify(?, ?)", [channel, payload]) } }
    }

    /// Hands `deliver` each payload sent on `channel`, on a connection of its own, until the
    /// calling task is cancelled. A lost connection is made again (a second later, then every
    /// few seconds); `resumed` is called each time listening starts again after a loss (what was
    /// sent meanwhile is not delivered).
    public func listen(_ channel: String, resumed: @escaping @Sendable () async -> Void, deliver: @escaping @Sendable (String) async -> Void) async {
        var lost = false
        var pause: Double = 1
        while !Task.isCancelled {
            let id = lock.withLock { nextID += 1; return nextID }
            do {
                let c = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: id, logger: logger).get()
                do {
                    try await c.listen(on: channel) { notifications in
                        if lost { await resumed() }
                        pause = 1
                        for try await n in notifications {
                            if Task.isCancelled { break }
                            await deliver(n.payload)
                        }
                    }
                } catch {
                    if !Task.isCancelled { logger.warning("listening on \(channel) stopped: \(PGFailure.storageError(error, location: location, committing: false).message)") }
                }
                try? await c.close()
            } catch {
                if !Task.isCancelled { logger.warning("cannot listen on \(channel): \(PGFailure.storageError(error, location: location, committing: false).message)") }
            }
            lost = true
            try? await Task.sleep(for: .seconds(pause))
            pause = min(pause * 2, 8)
        }
    }
}
