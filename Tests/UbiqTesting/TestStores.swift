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
    case folder, s3
    public var testDescription: String { rawValue }

    public static var available: [StoreKind] { S3TestStore.runs ? [.folder, .s3] : [.folder] }

    /// Where a test server of this kind keeps its chunks (a fresh bucket for S3).
    public var blobs: BlobStoreLocation {
        switch self {
        case .folder: return .folder
        case .s3:
            return .s3(endpoint: S3TestStore.store?.endpoint ?? "http://127.0.0.1:1", bucket: "ubiq-test-\(UUID().uuidString.prefix(13).lowercased())",
                       region: S3TestStore.env["AWS_DEFAULT_REGION"] ?? "us-east-1")
        }
    }

    /// A fresh, empty store of this kind with its files under `dir` (nil, with an issue
    /// recorded, when S3 is required but not named).
    public func make(in dir: TempDirectory, recentBytes: Int = 0) async throws -> (any ChunkStore)? {
        switch self {
        case .folder:
            return try FolderChunkStore(root: dir.url.appendingPathComponent("chunks"), recentBytes: recentBytes)
        case .s3:
            guard let s = S3TestStore.store else {
                Issue.record("no S3 store: set S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (.ci/run starts Ceph RGW)")
                return nil
            }
            let bucket = "ubiq-test-\(UUID().uuidString.prefix(13).lowercased())"
            let client = try S3Client(endpoint: s.endpoint, bucket: bucket, region: S3TestStore.env["AWS_DEFAULT_REGION"] ?? "us-east-1", credentials: s.credentials)
            return try await S3ChunkStore(client: client, indexPath: dir.url.appendingPathComponent("s3-index.sqlite").path, recentBytes: recentBytes)
        }
    }
}

