import AsyncHTTPClient
import Foundation
import UbiqCore
import UbiqStorage
import UbiqTransport

/// Where a server keeps its chunks (`--blobs`): the data folder's `chunks/` (the default), or
/// an S3-compatible bucket — `s3://BUCKET?endpoint=http://127.0.0.1:7480&region=us-east-1`,
/// with the credentials in `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` (and
/// `AWS_SESSION_TOKEN`); without `endpoint`, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL` or AWS's
/// own for the region; without `region`, `AWS_REGION`, `AWS_DEFAULT_REGION` or `us-east-1`.
public enum BlobStoreLocation: Sendable, Equatable {
    case folder
    case s3(endpoint: String, bucket: String, region: String)

    /// Reads `--blobs` (nil: the folder); `invalid_value` with what is wrong.
    public static func parse(_ text: String?, environment env: [String: String]) throws -> BlobStoreLocation {
        guard let text, !text.isEmpty else { return .folder }
        guard text.utf8.count <= 2048, let url = URLComponents(string: text), url.scheme == "s3",
              let bucket = url.host, !bucket.isEmpty, url.path.isEmpty || url.path == "/" else {
            throw CoreError(.invalidValue, "--blobs takes s3://BUCKET?endpoint=URL&region=REGION, not '\(text.prefix(200))'")
        }
        var endpoint: String?, region: String?
        for item in url.queryItems ?? [] {
            switch item.name {
            case "endpoint": endpoint = item.value
            case "region": region = item.value
            default: throw CoreError(.invalidValue, "--blobs: unknown parameter '\(item.name)' (endpoint, region)")
            }
        }
        let r = region ?? env["AWS_REGION"] ?? env["AWS_DEFAULT_REGION"] ?? "us-east-1"
        guard !r.isEmpty, r.utf8.count <= 64, r.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw CoreError(.invalidValue, "--blobs: '\(r.prefix(80))' is not a region")
        }
        let e = endpoint ?? env["AWS_ENDPOINT_URL_S3"] ?? env["AWS_ENDPOINT_URL"] ?? "https://s3.\(r).amazonaws.com"
        return .s3(endpoint: e, bucket: bucket, region: r)
    }

    /// Opens the store: the folder under `data`, or the bucket (created if missing) with its
    /// pack index in `data` (`s3-BUCKET.sqlite`).
    /// With `shared` (a PostgreSQL metadata database), the bucket's index is in that database's
    /// tables, and the database is bound to this store (`PostgreSQLDatabase.bindChunkStore`).
    func open(data: URL, environment env: [String: String], shared: PostgreSQLDatabase? = nil) async throws -> any ChunkStore {
        if let shared {
            do { try await shared.bindChunkStore(identity(data: data)) } catch let e as StorageError { throw APIFailure(e.code, e.message) }
        }
        switch self {
        case .folder:
            return try FolderChunkStore(root: data.appendingPathComponent("chunks"))
        case .s3(let endpoint, let bucket, let region):
            guard let key = env["AWS_ACCESS_KEY_ID"], let secret = env["AWS_SECRET_ACCESS_KEY"], !key.isEmpty, !secret.isEmpty else {
                throw APIFailure(.invalidValue, "--blobs s3://… needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment")
            }
            let client: S3Client
            do {
                client = try S3Client(endpoint: endpoint, bucket: bucket, region: region,
                                      credentials: SigV4.Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: env["AWS_SESSION_TOKEN"]))
            } catch let e as StorageError { throw APIFailure(.invalidValue, "--blobs: \(e.message)") }
            do {
                if let shared { return try await S3ChunkStore(client: client, indexIn: shared) }
                return try await S3ChunkStore(client: client, indexPath: data.appendingPathComponent("s3-\(bucket).sqlite").path)
            } catch let e as StorageError {
                throw APIFailure(e.code, "object store \(endpoint), bucket \(bucket): \(e.message)")
            }
        }
    }
}

extension BlobStoreLocation {
    /// What names this store among all others: the bucket at its endpoint, or the folder on
    /// this host.
    func identity(data: URL) -> String {
        switch self {
        case .folder: return "folder \(ProcessInfo.processInfo.hostName):\(data.appendingPathComponent("chunks").standardizedFileURL.path)"
        case .s3(let endpoint, let bucket, _): return "s3://\(bucket) at \(endpoint)"
        }
    }
}

extension ServerServices {
    /// Opens the server's stores: the metadata where `database` says (`metadata.sqlite` in
    /// `directory` by default), the chunks where `blobs` says.
    public static func open(at directory: URL, database: MetadataLocation = .sqlite, blobs: BlobStoreLocation,
                            environment: [String: String] = ProcessInfo.processInfo.environment, keyFile: String? = nil,
                            clock: @escaping @Sendable () -> Date = { Date() }) async throws -> ServerServices {
        if case .postgres = database {
            do { try PrivateDirectory.make(directory) } catch let e as CoreError { throw APIFailure(e.code, "data directory: \(e.message)") }
        }
        let meta = try await database.open(data: directory)
        do {
            let shared = meta.database as? PostgreSQLDatabase
            let path = Self.keyFile(in: directory, given: keyFile, environment: environment)
            let (ring, made) = try await openKeys(path, database: meta.database)
            var services = build(meta, SealedChunkStore(try await blobs.open(data: directory, environment: environment, shared: shared), ring: ring), clock)
            (services.keyFileMade, services.keyFile) = (made, path)
            try await services.forgetPlaintextIfEmpty()
            if let shared, case .s3 = blobs { services.sharedGuard = PostgreSQLChunkGuard(database: shared) }
            if let shared {
                services.relay = PostgreSQLPushRelay(database: shared)
                services.failureLog = PostgreSQLFailureLog(database: shared)
            }
            return services
        } catch {
            await meta.database.close()
            throw error
        }
    }
}
