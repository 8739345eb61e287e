import Foundation
import Testing
import UbiqStorage
import UbiqTesting

/// The object-store client against a real S3-compatible store (`S3TestStore`).
@Suite("S3 client against a real store", .enabled(if: S3TestStore.runs))
struct S3ClientTests {

    func client(_ bucket: String, secret: String? = nil) throws -> S3Client? {
        guard var s = S3TestStore.store else {
            Issue.record("no S3 store: set S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (.ci/run starts Ceph RGW)")
            return nil
        }
        if let secret { s.credentials.secretAccessKey = secret }
        return try S3Client(endpoint: s.endpoint, bucket: bucket, region: S3TestStore.env["AWS_DEFAULT_REGION"] ?? "us-east-1", credentials: s.credentials)
    }

    @Test func objectsGoInComeBackWholeAndByRangeAndGo() async throws {
        var rng = SeededRandom.forTest("s3-client")
        let bucket = "ubiq-test-\(UInt32.random(in: 0...UInt32.max, using: &rng))"
        guard let s3 = try client(bucket) else { return }
        try await s3.ensureBucket()
        try await s3.ensureBucket()  // there already: fine
        // A pack-sized object whose key needs encoding.
        let key = "packs/ab cd$é+=&?.pack"
        let bytes = (0..<(16 << 20)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        try await s3.put(key, bytes)
        #expect(try await s3.exists(key))
        #expect(try await s3.get(key) == bytes, "the whole object")
        #expect(try await s3.get(key, range: 1_000..<5_000).map(Array.init) == Array(bytes[1_000..<5_000]), "a range of it")
        #expect(try await s3.get(key, range: (16 << 20) - 10..<(16 << 20)) == Array(bytes.suffix(10)), "its end")
        #expect(try await s3.get("packs/none") == nil, "a missing object is nil")
        #expect(try await s3.exists("packs/none") == false)
        try await s3.put("empty", [])
        #expect(try await s3.get("empty") == [])
        try await s3.delete(key)
        #expect(try await s3.exists(key) == false)
        try await s3.delete(key)  // gone already: fine
        try await s3.delete("empty")
    }

    @Test func aWrongSecretOrEndpointIsOneClearError() async throws {
        guard let good = try client("ubiq-test-auth") else { return }
        try await good.ensureBucket()
        guard let bad = try client("ubiq-test-auth", secret: "not-the-secret") else { return }
        do {
            try await bad.put("x", [1, 2, 3])
            Issue.record("a wrong secret stored an object")
        } catch let e as StorageError {
            #expect(e.code == .storageFailure && e.message.contains("403") && e.message.contains("SignatureDoesNotMatch"), "\(e)")
        }
        #expect(throws: StorageError.self) { try S3Client(endpoint: "ftp://x", bucket: "b-ok", region: "us-east-1", credentials: .init(accessKeyID: "a", secretAccessKey: "b")) }
        #expect(throws: StorageError.self) { try S3Client(endpoint: "http://127.0.0.1:7480", bucket: "Bad_Name", region: "us-east-1", credentials: .init(accessKeyID: "a", secretAccessKey: "b")) }
        // Nothing listening: each try ends at its timeout, then one clear error (not a hang).
        let nowhere = try S3Client(endpoint: "http://127.0.0.1:1", bucket: "ubiq-test", region: "us-east-1", credentials: .init(accessKeyID: "a", secretAccessKey: "b"),
                                   timeout: .milliseconds(500))
        let t0 = ContinuousClock.now
        await #expect(throws: StorageError.self) { try await nowhere.put("x", [1]) }
        #expect(ContinuousClock.now - t0 < .seconds(90), "bounded by the tries' timeouts (about 3 s alone; much more only under a loaded suite)")
    }
}
