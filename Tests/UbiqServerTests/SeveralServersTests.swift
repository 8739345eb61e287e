import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqServer
import UbiqStorage
import UbiqTesting

/// Several `ubiq server`s on one PostgreSQL database and one bucket serve the same accounts.
@Suite("Several servers", .enabled(if: S3TestStore.runs && PostgresTestDatabase.runs))
struct SeveralServersTests {
    /// Two servers on a fresh database and bucket, with alice and bob; stopped (and the database
    /// dropped) by `stop`.
    struct Pair {
        let one: TestServer, two: TestServer
        let database: MetadataLocation, blobs: BlobStoreLocation

        static func start(configure: @escaping @Sendable (inout ServerServices) -> Void = { _ in }) async throws -> Pair? {
            guard let database = try await DatabaseKind.postgres.fresh() else { return nil }
            let blobs = StoreKind.s3.blobs
            let one = try await TestServer.start(database: database, blobs: blobs, configure: configure)
            let two = try await TestServer.start(database: database, blobs: blobs, configure: configure)
            try await one.user("alice")
            try await one.user("bob")
            return Pair(one: one, two: two, database: database, blobs: blobs)
        }

        func stop() async {
            await one.stop(keepData: true)
            await two.stop()  // drops the database
            one.directory.remove()
        }
    }

    /// Seeded: alice makes and empties garbage through server one, which collects back to back;
    /// bob uploads the same contents (found stored, so not written again) through server two and
    /// commits them. A third server started afterwards (nothing in its memory) reads every
    /// chunk of bob's back: no collection on one server took a chunk an upload on the other
    /// found stored.
    @Test func collectionsOnOneServerNeverTakeAChunkAnUploadOnAnotherFoundStored() async throws {
        guard let pair = try await Pair.start() else { return }
        let (alice, _) = try await pair.one.device("alice")
        let (bob, _) = try await pair.two.device("bob", name: "desktop")
        var rng = SeededRandom.forTest("fleet.gc.race")
        let contents = (0..<30).map { _ in rng.bytes(Int.random(in: 20_000...300_000, using: &rng)) }
        let services = pair.one.services
        let (runs, bobs) = try await raceCollections(services, alice: alice, bob: bob, contents: contents)
        await pair.one.stop(keepData: true)
        let three = try await TestServer.start(database: pair.database, blobs: pair.blobs)
        let fresh = UbiqAPIClient(baseURL: three.baseURL, token: bob.token)
        for (v, content) in bobs { #expect(try await downloadBytes(fresh, version: v) == content) }
        #expect(try await UbiqAPIClient(baseURL: three.baseURL, token: alice.token).account().used == 0)
        print("[fleet.gc.race] \(runs) collection(s) on server one beside \(contents.count) rounds on server two")
        await three.stop(keepData: true)
        three.directory.remove()
        await pair.two.stop()
        pair.one.directory.remove()
    }

    /// One collection at a time in the fleet: while one server collects, another's
    /// `ubiq server gc` is told so instead of running beside it.
    @Test func oneCollectionAtATimeAcrossServers() async throws {
        guard let pair = try await Pair.start() else { return }
        let one = pair.one.services, two = pair.two.services
        var refused = 0, ran = 0
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for s in [one, two, one, two] {
                group.addTask {
                    do { _ = try await s.collectGarbage(); return true } catch let e as APIFailure where e.message.contains("another server") { return false }
                }
            }
            for try await r in group { if r { ran += 1 } else { refused += 1 } }
        }
        #expect(ran >= 1 && ran + refused == 4)
        await pair.stop()
    }

    /// A database keeps its chunks in one store: a server with another --blobs is refused.
    @Test func aServerWithAnotherChunkStoreIsRefused() async throws {
        guard let pair = try await Pair.start() else { return }
        await #expect(throws: (any Error).self) {
            _ = try await TestServer.start(database: pair.database, blobs: .folder)
        }
        await pair.stop()
    }
}

extension SeveralServersTests {
    /// A device listening on server one hears of a commit and a settings change made through
    /// server two, within the push latency (printed); bob's devices hear nothing of alice's.
    @Test func aChangeThroughOneServerIsPushedToDevicesOnAnother() async throws {
        guard let pair = try await Pair.start() else { return }
        let (laptop, lid) = try await pair.two.device("alice", name: "laptop")
        let (phone, _) = try await pair.one.device("alice", name: "phone")
        let (bob, _) = try await pair.one.device("bob")
        let phoneInbox = PushInbox(), bobInbox = PushInbox()
        let t1 = Task { try await phone.listen { await phoneInbox.add($0) } }
        let t2 = Task { try await bob.listen { await bobInbox.add($0) } }
        #expect(await phoneInbox.wait { $0.kind == .hello } != nil)
        #expect(await bobInbox.wait { $0.kind == .hello } != nil)
        var latencies: [Duration] = []
        for i in 0..<5 {
            let start = ContinuousClock.now
            let r = try await commitFile(laptop, "Documents/n\(i).txt", "hi \(i)")
            let m = await phoneInbox.wait { $0.kind == .changes && $0.cursor >= r.item.changeSeq }
            latencies.append(ContinuousClock.now - start)
            #expect(m?.container == notes && m?.origin == lid)
        }
        _ = try await laptop.kvSet(notes, [KVEntry(key: "theme", value: .string("dark"), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: lid)])
        #expect(await phoneInbox.wait { $0.kind == .kv && $0.store == notes.string } != nil)
        #expect(await bobInbox.messages.allSatisfy { $0.kind == .hello })
        print("[fleet.push] commit+complete on server two → notification on server one: \(latencies.map { "\($0)" }.joined(separator: ", "))")
        t1.cancel(); t2.cancel()
        await pair.stop()
    }
}

extension SeveralServersTests {
    /// Failed logins count across the servers: ten guesses from one address spread over both
    /// servers use up that address's allowance for the user on either; the user still signs in
    /// from elsewhere.
    @Test func failedLoginsCountAcrossServers() async throws {
        guard let pair = try await Pair.start() else { return }
        let one = pair.one.port, two = pair.two.port
        let codes = try await offThePool {
            try (0..<10).map { i in try RawSocket.login(port: i % 2 == 0 ? one : two, from: "127.0.0.4", user: "alice", password: "guess \(i)") }
        }
        #expect(codes.allSatisfy { $0 == 401 }, "\(codes)")
        let refused = try await offThePool {
            [try RawSocket.login(port: one, from: "127.0.0.4", user: "alice", password: "secret-pw"),
             try RawSocket.login(port: two, from: "127.0.0.4", user: "alice", password: "secret-pw")]
        }
        #expect(refused == [429, 429], "\(refused)")
        let elsewhere = try await offThePool { try RawSocket.login(port: two, from: "127.0.0.5", user: "alice", password: "secret-pw") }
        #expect(elsewhere == 200)
        await pair.stop()
    }
}
