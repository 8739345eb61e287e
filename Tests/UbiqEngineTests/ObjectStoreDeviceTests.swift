import Foundation
import Testing
import UbiqCore
import UbiqEngine
import UbiqServer
import UbiqTesting

/// Devices on a server whose chunks are in an object store that goes away for a while: the
/// device that saves meanwhile lists a clear error for the file, nothing is lost, and once the
/// store is back the file reaches the other device by itself.
@Suite("Devices and an object store outage", .enabled(if: S3TestStore.runs), .serialized)
struct ObjectStoreDeviceTests {
    @Test func devicesRideOutAnObjectStoreThatGoesAway() async throws {
        guard let s = S3TestStore.store, let port = URL(string: s.endpoint)?.port else {
            Issue.record("no S3 store: set S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (.ci/run starts Ceph RGW)")
            return
        }
        let proxy = LoopbackProxy(target: port)
        try proxy.start()
        defer { proxy.stop() }
        let blobs = BlobStoreLocation.s3(endpoint: proxy.url, bucket: "ubiq-test-\(UUID().uuidString.prefix(13).lowercased())",
                                         region: S3TestStore.env["AWS_DEFAULT_REGION"] ?? "us-east-1")
        try await withFleet(blobs: blobs) { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/before.txt", "before the outage")
            #expect(await eventually { b.read("Documents/before.txt") == "before the outage" })

            proxy.refuse(true)
            proxy.cut()
            var rng = SeededRandom.forTest("engine.s3-outage")
            let during = rng.bytes(300_000)
            try a.write("Documents/during.bin", bytes: during)
            let listed = await eventually(timeout: .seconds(60)) {
                await a.engine.status().errors.contains { $0.path == "Documents/during.bin" && $0.code == ErrorCode.storageFailure.rawValue }
            }
            let errors = await a.engine.status().errors
            #expect(listed, "A lists the file with the server's storage failure: \(errors)")
            #expect(!b.exists("Documents/during.bin"))
            #expect(a.readBytes("Documents/during.bin") == during, "nothing lost on A")

            proxy.refuse(false)
            #expect(await eventually(timeout: .seconds(90)) { b.readBytes("Documents/during.bin") == during }, "\(describeDiff(a, b))")
            #expect(await eventually { await a.engine.status().errors.isEmpty })
            #expect(await converge(a, b), "\(describeDiff(a, b))")
        }
    }
}
