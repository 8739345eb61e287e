import Foundation
import Testing
import UbiqCore
import UbiqStorage
import UbiqTesting

/// The object store behind a loopback proxy that can refuse connections, cut them, or hold its
/// answers: a store that is down, or that took an object and whose answer was lost. A failed
/// write is one clear error and leaves no index row (nothing is acknowledged that is not
/// stored); what the store took without the answer coming back is removed later.
@Suite("Object store outages", .enabled(if: S3TestStore.runs))
struct ObjectStoreOutageTests {
    /// A store on a fresh bucket reached through `proxy` (short tries: 2 s each).
    func store(through proxy: LoopbackProxy, bucket: String, index: String, now: @escaping @Sendable () -> Date = { Date() }) async throws -> S3ChunkStore? {
        guard let s = S3TestStore.store else {
            Issue.record("no S3 store: set S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (.ci/run starts Ceph RGW)")
            return nil
        }
        let client = try S3Client(endpoint: proxy.url, bucket: bucket, region: S3TestStore.env["AWS_DEFAULT_REGION"] ?? "us-east-1",
                                  credentials: s.credentials, timeout: .seconds(2))
        return try await S3ChunkStore(client: client, indexPath: index, recentBytes: 0, now: now)
    }

    func proxy() throws -> LoopbackProxy? {
        guard let e = S3TestStore.store?.endpoint, let port = URL(string: e)?.port else { return nil }
        let p = LoopbackProxy(target: port)
        try p.start()
        return p
    }

    @Test func aStoreThatIsDownIsOneClearErrorAndNothingIsRecorded() async throws {
        let dir = try TempDirectory("ubiq-outage")
        defer { dir.remove() }
        guard let proxy = try proxy() else { Issue.record("no S3 endpoint with a port"); return }
        defer { proxy.stop() }
        let bucket = "ubiq-test-\(UUID().uuidString.prefix(13).lowercased())"
        guard let store = try await store(through: proxy, bucket: bucket, index: dir.url.appendingPathComponent("i.sqlite").path) else { return }
        var rng = SeededRandom.forTest("outage.down")
        let first = (0..<10).map { _ in rng.bytes(5_000) }.map { (ContentHash.of($0), $0) }
        let second = (0..<10).map { _ in rng.bytes(5_000) }.map { (ContentHash.of($0), $0) }
        try await store.putMany(first)

        proxy.refuse(true)
        proxy.cut()
        let t0 = ContinuousClock.now
        let down = await #expect(throws: StorageError.self) { try await store.putMany(second) }
        #expect(down?.code == .storageFailure && down?.message.contains("object store") == true, "\(down?.message ?? "")")
        #expect(ContinuousClock.now - t0 < .seconds(30), "tried a few times, then gave up")
        for (h, _) in second { #expect(try await !store.has(h), "nothing recorded that the store did not take") }
        // A read while it is down is a failure, never "no such chunk".
        let read = await #expect(throws: StorageError.self) { _ = try await store.get(first[0].0) }
        #expect(read?.code == .storageFailure)

        proxy.refuse(false)
        try await store.putMany(second)
        for (h, b) in first + second { #expect(try await store.get(h) == b) }
    }

    @Test func anObjectWhoseAnswerWasLostIsNeverIndexedAndIsRemovedLater() async throws {
        let dir = try TempDirectory("ubiq-outage")
        defer { dir.remove() }
        guard let proxy = try proxy() else { Issue.record("no S3 endpoint with a port"); return }
        defer { proxy.stop() }
        let bucket = "ubiq-test-\(UUID().uuidString.prefix(13).lowercased())"
        let index = dir.url.appendingPathComponent("i.sqlite").path
        guard let store = try await store(through: proxy, bucket: bucket, index: index) else { return }
        var rng = SeededRandom.forTest("outage.lost")
        let kept = (0..<5).map { _ in rng.bytes(4_000) }.map { (ContentHash.of($0), $0) }
        let lost = (0..<5).map { _ in rng.bytes(6_000) }.map { (ContentHash.of($0), $0) }
        try await store.putMany(kept)

        proxy.cut()
        proxy.holdAnswers(after: "PUT /\(bucket)/packs/")  // the store takes the object; its answer never comes
        let e = await #expect(throws: StorageError.self) { try await store.putMany(lost) }
        #expect(e?.code == .storageFailure)
        proxy.holdAnswers(false)
        proxy.cut()
        for (h, _) in lost { #expect(try await !store.has(h)) }
        #expect(try await store.footprint() > 20_000, "the object the store took is there, named by no row")

        // An hour later, compaction removes what no row names; what is indexed stays.
        guard let later = try await self.store(through: proxy, bucket: bucket, index: index, now: { Date().addingTimeInterval(7200) }) else { return }
        let c = try await later.compact()
        #expect(c.deleted >= 1 && c.bytesFreed >= 30_000, "\(c)")
        #expect(try await later.footprint() == 20_000)
        for (h, b) in kept { #expect(try await later.get(h) == b) }
    }
}
