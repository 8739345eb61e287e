import Crypto
import Foundation
import Testing
import UbiqCore
import UbiqServer
import UbiqStorage

/// A real S3-compatible store for tests: the Ceph RADOS Gateway that
/// `.ci/run` starts (`../shared/scripts/ceph-rgw-up.sh`), named by `S3_ENDPOINT`,
/// `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`. Without them the suite does not run, unless
/// `UBIQ_REQUIRE_S3=1` (CI) makes that a failure.
public enum S3TestStore {
    public static let env = ProcessInfo.processInfo.environment
    public static let required = env["UBIQ_REQUIRE_S3"] == "1"
    public static var store: (endpoint: String, credentials: SigV4.Credentials)? {
        guard let e = env["S3_ENDPOINT"], let k = env["AWS_ACCESS_KEY_ID"], let s = env["AWS_SECRET_ACCESS_KEY"] else { return nil }
        return (e, SigV4.Credentials(accessKeyID: k, secretAccessKey: s, sessionToken: env["AWS_SESSION_TOKEN"]))
    }
    public static var runs: Bool { store != nil || required }
}

/// The chunk stores a server can use: the folder (always) and an S3 bucket (when a store is
/// named, see `S3TestStore`).
public enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `s3Shared`: a bucket whose pack index is in a PostgreSQL database (as several servers share it).
    /// `sealedFolder`, `sealedS3`: the same stores sealed at rest (`SealedChunkStore`), as servers open them.
    case folder, s3, s3Shared, sealedFolder, sealedS3
    public var testDescription: String { rawValue }
    /// Sealed at rest (`SealedChunkStore`).
    public var sealed: Bool { self == .sealedFolder || self == .sealedS3 }

    /// The kinds a server's `--blobs` names (the index's place follows from `--database`).
    public static var available: [StoreKind] { S3TestStore.runs ? [.folder, .s3] : [.folder] }

    /// Every kind of store, for the store's own contract.
    public static var contract: [StoreKind] {
        available + [.sealedFolder] + (S3TestStore.runs ? [.sealedS3] : []) + (S3TestStore.runs && PostgresTestDatabase.runs ? [.s3Shared] : [])
    }

    /// Where a test server of this kind keeps its chunks (a fresh bucket for S3).
    public var blobs: BlobStoreLocation {
        switch self {
        case .folder, .sealedFolder: return .folder
        case .s3, .s3Shared, .sealedS3:
            return .s3(endpoint: S3TestStore.store?.endpoint ?? "http://127.0.0.1:1", bucket: "ubiq-test-\(UUID().uuidString.prefix(13).lowercased())",
                       region: S3TestStore.env["AWS_DEFAULT_REGION"] ?? "us-east-1")
        }
    }

    /// A fresh, empty store of this kind with its files under `dir` (nil, with an issue
    /// recorded, when S3 is required but not named).
    public func make(in dir: TempDirectory, recentBytes: Int = 0) async throws -> (any ChunkStore)? {
        switch self {
        case .sealedFolder, .sealedS3:
            guard let inner = try await (self == .sealedFolder ? StoreKind.folder : .s3).make(in: dir, recentBytes: recentBytes) else { return nil }
            return SealedChunkStore(inner, ring: ServerKeyRing(keys: [SymmetricKey(size: .bits256)]))
        case .folder:
            return try FolderChunkStore(root: dir.url.appendingPathComponent("chunks"), recentBytes: recentBytes)
        case .s3, .s3Shared:
            guard let s = S3TestStore.store else {
                Issue.record("no S3 store: set S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (.ci/run starts Ceph RGW)")
                return nil
            }
            let bucket = "ubiq-test-\(UUID().uuidString.prefix(13).lowercased())"
            let client = try S3Client(endpoint: s.endpoint, bucket: bucket, region: S3TestStore.env["AWS_DEFAULT_REGION"] ?? "us-east-1", credentials: s.credentials)
            if self == .s3Shared {
                // The database is dropped when the test run's server ends (test databases are throwaway).
                guard let pg = try await PostgresTestDatabase.fresh() else { return nil }
                return try await S3ChunkStore(client: client, indexIn: try await PostgreSQLDatabase.open(pg), recentBytes: recentBytes)
            }
            return try await S3ChunkStore(client: client, indexPath: dir.url.appendingPathComponent("s3-index.sqlite").path, recentBytes: recentBytes)
        }
    }
}


/// A real PostgreSQL server for tests: the one `.ci/run` starts (`.ci/postgres-up.sh`), named by
/// `UBIQ_TEST_DATABASE_URL` (or `DATABASE_URL`, as the script's `pg.env` writes it); its role
/// may create databases, and each test gets a fresh one. Without it the PostgreSQL cases do not
/// run, unless `UBIQ_REQUIRE_POSTGRES=1` (CI) makes that a failure.
public enum PostgresTestDatabase {
    public static let env = ProcessInfo.processInfo.environment
    public static let required = env["UBIQ_REQUIRE_POSTGRES"] == "1"
    public static var url: String? { env["UBIQ_TEST_DATABASE_URL"] ?? env["DATABASE_URL"] }
    public static var runs: Bool { url != nil || required }

    /// A new, empty database on the test server (nil, with an issue recorded, when PostgreSQL
    /// is required but not named).
    public static func fresh() async throws -> PostgreSQLLocation? {
        guard let url else {
            Issue.record("no PostgreSQL: set UBIQ_TEST_DATABASE_URL or DATABASE_URL (.ci/run starts one)")
            return nil
        }
        var location = try PostgreSQLLocation(parsing: url)
        let name = "ubiq_t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        try await PostgreSQLDatabase.administer(location, ["CREATE DATABASE \(name)"])
        location.database = name
        // Dozens of test servers share one PostgreSQL at a time: small pools keep them under
        // its connection limit (a real deployment keeps the default 10 per server).
        location.connections = 4
        return location
    }

    /// Drops a database `fresh()` made (connections still open to it are ended).
    public static func drop(_ location: PostgreSQLLocation) async { await TestDatabaseDrop.drop(location) }
}

/// The metadata databases a server can use: SQLite (always) and PostgreSQL (when a server is
/// named, see `PostgresTestDatabase`).
public enum DatabaseKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    public var testDescription: String { rawValue }

    public static var available: [DatabaseKind] { PostgresTestDatabase.runs ? [.sqlite, .postgres] : [.sqlite] }

    /// A fresh database of this kind for a test server (nil when PostgreSQL is required but not
    /// named; an issue is recorded).
    public func fresh() async throws -> MetadataLocation? {
        switch self {
        case .sqlite: return .sqlite
        case .postgres: return try await PostgresTestDatabase.fresh().map { .postgres($0) }
        }
    }
}

extension DatabaseKind {
    /// A metadata store of this kind, fresh and empty (SQLite in `dir`); nil when PostgreSQL is
    /// required but not named. Give it back with `dispose`.
    public func openStore(in dir: TempDirectory, name: String = "meta") async throws -> (SQLMetadataStore, MetadataLocation)? {
        guard let location = try await fresh() else { return nil }
        switch location {
        case .sqlite: return (try SQLMetadataStore(path: dir.url.appendingPathComponent("\(name).sqlite").path), location)
        case .postgres(let pg): return (SQLMetadataStore(database: try await PostgreSQLDatabase.open(pg)), location)
        }
    }

    /// Another store on the same database as one `openStore` made (its own connections: a
    /// second server on the same database).
    public static func reopen(_ location: MetadataLocation, in dir: TempDirectory, name: String = "meta") async throws -> SQLMetadataStore {
        switch location {
        case .sqlite: return try SQLMetadataStore(path: dir.url.appendingPathComponent("\(name).sqlite").path)
        case .postgres(let pg): return SQLMetadataStore(database: try await PostgreSQLDatabase.open(pg))
        }
    }

    /// Closes a store `openStore` made and drops its PostgreSQL database.
    public static func dispose(_ store: SQLMetadataStore, _ location: MetadataLocation) async {
        await store.database.close()
        if case .postgres(let pg) = location { await PostgresTestDatabase.drop(pg) }
    }
}

/// A server's two stores together, as device tests run them: embedded (SQLite and the folder),
/// an S3 bucket beside SQLite, and PostgreSQL with an S3 bucket (the set-up several servers
/// share).
public enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case embedded, s3, postgresS3
    /// The embedded stores, the accounts encrypted end to end (devices hold their keys).
    case encrypted
    public var testDescription: String { rawValue }

    /// `available`, and the embedded stores with encrypted accounts.
    public static var withEncrypted: [Backend] { available + [.encrypted] }

    public static var available: [Backend] {
        [.embedded] + (S3TestStore.runs ? [.s3] : []) + (S3TestStore.runs && PostgresTestDatabase.runs ? [.postgresS3] : [])
    }

    public var blobs: BlobStoreLocation { self == .embedded || self == .encrypted ? .folder : StoreKind.s3.blobs }
    public var database: DatabaseKind { self == .postgresS3 ? .postgres : .sqlite }
}
