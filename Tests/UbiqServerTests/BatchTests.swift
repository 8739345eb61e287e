import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqTesting

/// The batch routes small files and big uploads travel by: framed chunk upload and fetch,
/// many commits in one transaction, several manifests at once.
@Suite("Batches")
struct BatchTests {
    @Test(arguments: DatabaseKind.available) func framedChunksGoUpAndComeBackVerifiedAndOnlyToTheirOwner(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (alice, _) = try await server.device("alice")
            let (bob, _) = try await server.device("bob")
            var rng = SeededRandom.forTest("batch.chunks")
            let chunks = (0..<300).map { _ in rng.bytes(Int.random(in: 1...9000, using: &rng)) }
            try await alice.uploadChunks(chunks + [chunks[0]])  // a repeat inside a batch is stored once
            let hashes = chunks.map { ContentHash.of($0) }
            #expect(try await alice.missingChunks(hashes).isEmpty)
            let distinct = Dictionary(zip(hashes, chunks.map(\.count)), uniquingKeysWith: { a, _ in a })
            #expect(try await alice.account().used == Int64(distinct.values.reduce(0, +)))
            #expect(try await alice.downloadChunks(hashes.reversed()) == chunks.reversed())
            #expect(try await alice.downloadChunk(hashes[17]) == chunks[17])
            // Knowing hashes grants nothing: Bob gets not_found for the whole request.
            await expectCode(.notFound) { _ = try await bob.downloadChunks([hashes[0]]) }
            try await bob.uploadChunks([chunks[1]])  // Bob uploading the same bytes gives him that one only
            #expect(try await bob.downloadChunks([hashes[1]]) == [chunks[1]])
            await expectCode(.notFound) { _ = try await bob.downloadChunks([hashes[1], hashes[2]]) }
            // Uploading again changes nothing.
            let used = try await alice.account().used
            try await alice.uploadChunks(chunks)
            #expect(try await alice.account().used == used)
        }
    }

    @Test(arguments: DatabaseKind.available) func namedChunksAreStoredOnlyIfEveryOneHashesToItsName(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (alice, _) = try await server.device("alice")
            var rng = SeededRandom.forTest("batch.named")
            let chunks = (0..<50).map { _ in rng.bytes(Int.random(in: 1...9000, using: &rng)) }
            let hashes = chunks.map { ContentHash.of($0) }
            // One chunk changed after it was named (a file edited while being read): nothing is stored.
            var torn = Array(zip(hashes, chunks))
            let k = Int.random(in: 0..<torn.count, using: &rng)
            torn[k].1[0] ^= 0xFF
            await expectCode(.hashMismatch) { try await alice.uploadChunks(named: torn) }
            #expect(Set(try await alice.missingChunks(hashes)) == Set(hashes))
            #expect(try await alice.account().used == 0)
            try await alice.uploadChunks(named: Array(zip(hashes, chunks)))
            #expect(try await alice.missingChunks(hashes).isEmpty)
            #expect(try await alice.downloadChunks(hashes) == chunks)
            // A name that is not a hash, or a frame cut short, is refused.
            var body = NamedChunkFrames.encode([(hashes[0], chunks[0])])
            body[3] = UInt8(ascii: "x")
            var (s, _) = try await alice.raw(.POST, "/v1/chunks", body: body, contentType: NamedChunkFrames.contentType)
            #expect(s == 400)
            body = NamedChunkFrames.encode([(hashes[0], chunks[0])])
            body.removeLast()
            (s, _) = try await alice.raw(.POST, "/v1/chunks", body: body, contentType: NamedChunkFrames.contentType)
            #expect(s == 400)
        }
    }

    /// A device may fetch the chunks of a file another device of the account is still
    /// uploading: the fetch waits for them, as long as chunks keep arriving for that account.
    @Test(arguments: DatabaseKind.available) func aFetchWaitsForChunksTheAccountIsStillUploading(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, _) = try await server.device("alice", name: "laptop")
            let (desktop, _) = try await server.device("alice", name: "desktop")
            let (bob, _) = try await server.device("bob")
            var rng = SeededRandom.forTest("batch.wait")
            let chunks = (0..<40).map { _ in rng.bytes(Int.random(in: 1...9000, using: &rng)) }
            let hashes = chunks.map { ContentHash.of($0) }
            // The desktop asks before anything is there; the laptop sends the chunks in two halves.
            let sent = ManagedFlag()  // set once Bob's copy is in and before the laptop's second half
            let fetch = Task { (try await desktop.downloadChunks(hashes, waitSeconds: 20), sent.isSet) }
            try await laptop.uploadChunks(named: Array(zip(hashes, chunks).prefix(20)))
            // Bob uploading the same bytes satisfies nothing of Alice's.
            try await bob.uploadChunks(named: Array(zip(hashes, chunks).suffix(20)))
            sent.set()
            try await laptop.uploadChunks(named: Array(zip(hashes, chunks).suffix(20)))
            let (got, afterBob) = try await fetch.value
            #expect(got == chunks)
            #expect(afterBob, "the fetch returned before the laptop's second half was sent")
            // Without waiting, or when nothing arrives within the wait, it is not_found.
            let absent = [ContentHash.of([7, 7, 7])]
            await expectCode(.notFound) { _ = try await desktop.downloadChunks(absent) }
            let start = ContinuousClock.now
            await expectCode(.notFound) { _ = try await desktop.downloadChunks(absent, waitSeconds: 1) }
            #expect(ContinuousClock.now - start >= .seconds(1))
        }
    }

    @Test(arguments: DatabaseKind.available) func brokenFramingOversizedAndEmptyChunksAreRefusedAndStoreNothing(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (alice, _) = try await server.device("alice")
            let good = Array("fine".utf8)
            var frames = ChunkFrames.encode([good])
            frames.removeLast()  // the length says 4, 3 bytes follow
            var (s, _) = try await alice.raw(.POST, "/v1/chunks", body: frames, contentType: "application/octet-stream")
            #expect(s == 400)
            (s, _) = try await alice.raw(.POST, "/v1/chunks", body: [0, 0, 0, 0], contentType: "application/octet-stream")
            #expect(s == 400)
            (s, _) = try await alice.raw(.POST, "/v1/chunks", body: [0x7F, 0xFF, 0xFF, 0xFF, 1, 2, 3], contentType: "application/octet-stream")
            #expect(s == 400)
            let big = [UInt8](repeating: 1, count: WireLimits.maxChunkBody + 1)
            await expectCode(.invalidRequest) { try await alice.uploadChunks([big]) }
            let tooMuch = (0..<17).map { i in [UInt8](repeating: UInt8(i), count: WireLimits.maxChunkBody) }
            await expectCode(.payloadTooLarge) { try await alice.uploadChunks(tooMuch) }
            #expect(try await alice.account().used == 0)
            #expect(try await alice.missingChunks([ContentHash.of(good)]) == [ContentHash.of(good)])
            // A fetch asking for too much at once is refused, not truncated.
            let parts = (0..<17).map { i in [UInt8](repeating: UInt8(i), count: WireLimits.maxChunkBody) }
            for p in parts { try await alice.uploadChunks([p]) }
            await expectCode(.payloadTooLarge) { _ = try await alice.downloadChunks(parts.map { ContentHash.of($0) }) }
        }
    }

    @Test(arguments: DatabaseKind.available) func aCommitBatchDecidesEachCommitAloneInOneTransaction(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (alice, _) = try await server.device("alice")
            let (bob, _) = try await server.device("bob")
            var rng = SeededRandom.forTest("batch.commits")
            var requests: [CommitRequest] = []
            var contents: [[UInt8]] = []
            for i in 0..<200 {
                let bytes = rng.bytes(Int.random(in: 1...5000, using: &rng))
                contents.append(bytes)
                requests.append(CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("many/f\(i).txt"),
                                              kind: .file, base: nil, modified: Date(), manifest: Manifest.of(bytes)))
            }
            try await alice.uploadChunks(contents.dropLast())  // the last file's chunk is not sent
            // One commit names a folder with content: refused alone.
            requests.append(CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("bad"), kind: .folder,
                                          base: nil, modified: Date(), manifest: Manifest.of([1])))
            let results = try await alice.commitMany(notes, requests)
            #expect(results.count == 201)
            #expect(results.prefix(199).allSatisfy { $0.response?.version?.uploaded == true && $0.response?.outcome == .created })
            #expect(results[199].response?.version?.uploaded == false && results[199].response?.missing.count == 1)
            #expect(results[200].response == nil && results[200].error?.code == .invalidRequest)
            // Retrying the same batch is answered from what happened (same version IDs).
            let again = try await alice.commitMany(notes, Array(requests.prefix(5)))
            #expect(again.allSatisfy { $0.response?.outcome == .unchanged })
            // Another device sees them all, and reads manifests of many versions at once.
            var items: [ItemRecord] = []
            var cursor: Int64 = 0
            while true {
                let page = try await bob.changes(notes, after: cursor)
                items += page.items
                cursor = page.cursor
                if !page.hasMore { break }
            }
            #expect(items.isEmpty)  // Bob is another account
            var aliceItems: [ItemRecord] = []
            cursor = 0
            while true {
                let page = try await alice.changes(notes, after: cursor)
                aliceItems += page.items
                cursor = page.cursor
                if !page.hasMore { break }
            }
            #expect(aliceItems.filter { $0.kind == .file }.count == 200)
            // A new file's answer is built, not read back: it must be what the server now holds —
            // what a retry reads back and what the change feed says.
            for (first, retry) in zip(results.prefix(5), again) {
                #expect(first.response?.item == retry.response?.item && first.response?.version == retry.response?.version)
            }
            let fed = Dictionary(uniqueKeysWithValues: aliceItems.map { ($0.id, $0) })
            for r in results.prefix(200) { #expect(r.response.map { fed[$0.item.id] == $0.item } == true) }
            let versions = requests.prefix(200).map(\.versionID)
            let ms = try await alice.manifests(notes, versions: versions)
            #expect(ms.map(\.hash) == contents.map { Manifest.of($0).hash })
            await expectCode(.notFound) { _ = try await bob.manifests(notes, versions: [versions[0]]) }
            await expectCode(.notFound) { _ = try await alice.manifests(notes, versions: [VersionID(uuid: UUID())]) }
        }
    }
}

/// A flag set once, readable from any task.
final class ManagedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}
