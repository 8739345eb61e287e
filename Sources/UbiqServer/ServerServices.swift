import Crypto
import Foundation
import Hummingbird
import Logging
import UbiqCore
import UbiqProtocol
import UbiqStorage
import UbiqTransport

/// What every route needs: the stores, the push hub, the clock. Clock and stores are injected so
/// tests can swap them.
public struct ServerServices: Sendable {
    public let metadata: any MetadataStore
    /// The synced key-value stores (settings).
    public let keyValues: any KeyValueStore
    /// The administrator's queries (`ubiq server user|device …`, and the account's device list).
    public let admin: any AccountAdminStore
    public let chunks: any ChunkStore
    /// Garbage collection's questions to the metadata.
    public let liveness: any ChunkLivenessStore
    public let push: PushHub
    /// Where the account's devices serve chunks on their LANs (#40).
    let peers = PeerRegistry()
    public let clock: @Sendable () -> Date
    let throttle = LoginThrottle()
    let passwordChecks = PasswordChecks()
    let reservations = QuotaReservations()
    let arrivals = ChunkArrivals()
    /// Uploads (shared) against garbage collection's decisions (exclusive): `storing`.
    let chunkGate = AsyncGate()
    /// One garbage collection at a time.
    let collectionTurn = AsyncGate()
    let collectionWake = Wakeup()
    /// The secret `ubiq server gc` presents to this running server (`POST /v1/admin/gc`); nil
    /// when the server takes no administrator requests.
    public var adminToken: String?
    /// The metadata database, when these services opened it (closed by `close()`).
    var database: (any SQLDatabase)?
    /// When several servers may share the database and the bucket (PostgreSQL metadata, the
    /// bucket's index in it): what keeps their uploads and collections apart.
    public var sharedGuard: (any SharedChunkGuard)?
    /// Push notifications to and from the other servers of a shared database.
    public var relay: (any PushRelay)?
    /// Failed logins counted across the servers of a shared database.
    public var failureLog: (any FailureLog)?
    /// How long after a trash is emptied the server collects garbage (`ChunkCollection.afterEmptying`).
    public var collectionDelay = ChunkCollection.afterEmptying
    /// Most push channels one account may hold open (`PushHub.perAccount`).
    public var pushChannelsPerAccount = PushHub.perAccount
    /// Least time between two collections woken by emptied trashes (`ChunkCollection.wokenGap`).
    public var collectionGap = ChunkCollection.wokenGap
    /// Collections the server's own collector has begun.
    public let collectionRuns = RunCount()
    /// The server key file, when this start made it (the server says so once).
    public var keyFileMade: String?
    /// The server key file chunks are sealed with at rest.
    public var keyFile: String?
    /// PBKDF2 rounds for the passwords this server sets (`PasswordHasher.rounds`; tests that make
    /// hundreds of accounts lower it — a verifier keeps its own count, so any is checked right).
    public var passwordRounds = PasswordHasher.rounds

    /// The parts routes are built from, each with only what it uses (composed once, in
    /// ``UbiqServerApp/make(services:host:port:logger:headTimeout:idleTimeout:maxConnections:maxConnectionsPerAddress:bodyRate:pushPing:tls:onRunning:)``).
    var auth: Authenticator { Authenticator(metadata: metadata, clock: clock) }
    var publisher: Publisher { Publisher(push: push, relay: relay) }
    var collector: ChunkCollector {
        ChunkCollector(chunks: chunks, liveness: liveness, clock: clock, chunkGate: chunkGate, turn: collectionTurn, wake: collectionWake, sharedGuard: sharedGuard)
    }
    var quota: QuotaGuard { QuotaGuard(metadata: metadata, reservations: reservations) }
    var logins: Logins { Logins(throttle: throttle, failureLog: failureLog, passwordChecks: passwordChecks, passwordRounds: passwordRounds) }

    /// Garbage collection now (`ubiq server gc`; see ``ChunkCollector/collectGarbage(dryRun:)``).
    public func collectGarbage(dryRun: Bool = false) async throws -> GarbageReport { try await collector.collectGarbageForAPerson(dryRun: dryRun) }

    public init(metadata: any MetadataStore, keyValues: any KeyValueStore, admin: any AccountAdminStore, liveness: any ChunkLivenessStore,
                chunks: any ChunkStore, push: PushHub = PushHub(), clock: @escaping @Sendable () -> Date = { Date() }) {
        self.liveness = liveness
        self.metadata = metadata
        self.keyValues = keyValues
        self.admin = admin
        self.chunks = chunks
        self.push = push
        self.clock = clock
    }

    /// Opens the embedded store in `directory` (`metadata.sqlite` and `chunks/`, sealed with the
    /// server key: see ``keyFile(in:given:environment:)``), creating it if needed.
    public static func embedded(at directory: URL, keyFile: String? = nil, environment env: [String: String] = ProcessInfo.processInfo.environment,
                                clock: @escaping @Sendable () -> Date = { Date() }) async throws -> ServerServices {
        let meta = try openMetadata(at: directory)
        let path = Self.keyFile(in: directory, given: keyFile, environment: env)
        let (ring, made) = try await openKeys(path, database: meta.database)
        var services = build(meta, SealedChunkStore(try FolderChunkStore(root: directory.appendingPathComponent("chunks")), ring: ring), clock)
        (services.keyFileMade, services.keyFile) = (made, path)
        try await services.forgetPlaintextIfEmpty()
        return services
    }

    /// The server key file: `given` (`--key-file`), else `UBIQ_SERVER_KEY_FILE`, else
    /// `server.key` in the data folder (made on the first start).
    public static func keyFile(in directory: URL, given: String?, environment env: [String: String]) -> String {
        if let given, !given.isEmpty { return given }
        if let f = env["UBIQ_SERVER_KEY_FILE"], !f.isEmpty { return f }
        return directory.appendingPathComponent("server.key").path
    }

    /// The server's keys, bound to its metadata database (see `ServerKeyCheck`); the file's path
    /// when it was made now.
    static func openKeys(_ path: String, database: any SQLDatabase) async throws -> (ServerKeyRing, String?) {
        do {
            let (ring, created) = try await ServerKeyCheck.open(path, database: database)
            return (ring, created ? path : nil)
        } catch let e as StorageError { throw APIFailure(e.code, e.message) }
    }

    /// Makes the data folder (private to the server's user) and opens `metadata.sqlite` in it.
    static func openMetadata(at directory: URL) throws -> SQLMetadataStore {
        // Only the server's own user may enter (#23 row 6: 0755 let every local user read it).
        do { try PrivateDirectory.make(directory) } catch let e as CoreError { throw APIFailure(e.code, "data directory: \(e.message)") }
        guard FileManager.default.isWritableFile(atPath: directory.path) else {
            throw APIFailure(.storageFailure, "data directory \(directory.path) is not writable")
        }
        return try SQLMetadataStore(path: directory.appendingPathComponent("metadata.sqlite").path)
    }

    static func build(_ meta: SQLMetadataStore, _ chunks: any ChunkStore, _ clock: @escaping @Sendable () -> Date) -> ServerServices {
        var services = ServerServices(metadata: meta, keyValues: SQLKeyValueStore(meta), admin: SQLAccountAdmin(meta), liveness: SQLChunkLiveness(meta),
                                      chunks: chunks, clock: clock)
        services.database = meta.database
        return services
    }

    /// Lets go of the metadata database's connections (a PostgreSQL pool; SQLite closes with the
    /// process). Call once the server has stopped.
    public func close() async {
        await database?.close()
    }

    /// Creates an account (used by `ubiq server user add`). Names are 1-64 of `a-z 0-9 . _ -`.
    public func addUser(name: String, password: String, quota: Int64) async throws {
        try Self.validateUserName(name)
        try Self.validatePassword(password)
        guard quota > 0 else { throw APIFailure(.invalidValue, "quota must be positive") }
        _ = try await metadata.createAccount(name: name, password: try await passwordChecks.make(password, rounds: passwordRounds), quota: quota, now: clock())
    }

    static func validateUserName(_ name: String) throws {
        guard !name.isEmpty, name.utf8.count <= WireLimits.maxUserNameBytes,
              name.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D })
        else { throw APIFailure(.invalidValue, "user name must be 1-\(WireLimits.maxUserNameBytes) characters of a-z 0-9 . _ -") }
    }
}

/// A server's services print as their stores' kinds only: the service lifecycle logs the
/// services it starts (at debug level), and the default description of this type held the
/// admin token.
extension ServerServices: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "ServerServices(metadata: \(type(of: metadata)), chunks: \(type(of: chunks)))" }
    public var debugDescription: String { description }
}
