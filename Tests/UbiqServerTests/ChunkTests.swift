import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqTesting

@Suite("Chunks")
struct ChunkTests {
    @Test(arguments: DatabaseKind.available) func uploadOnlyWhatIsMissingAndDownloadVerified(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (alice, _) = try await server.device("alice")
            var rng = SeededRandom.forTest("chunks.upload")
            let bytes = rng.bytes(300_000)
            let m = Manifest.of(bytes)
            #expect(Set(try await alice.missingChunks(m.chunks.map(\.hash))) == Set(m.chunks.map(\.hash)))
            try await upload(alice, bytes)
            #expect(try await alice.missingChunks(m.chunks.map(\.hash)).isEmpty)
            var off = 0
            for c in m.chunks {
                #expect(try await alice.downloadChunk(c.hash) == Array(bytes[off..<(off + c.size)]))
                off += c.size
            }
            #expect(try await alice.account().used == Int64(bytes.count))
            // Uploading again changes nothing.
            try await upload(alice, bytes)
            #expect(try await alice.account().used == Int64(bytes.count))
        }
    }

    @Test(arguments: DatabaseKind.available) func bytesThatDoNotMatchTheirHashAreRejected(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (alice, _) = try await server.device("alice")
            let good = Array("hello".utf8)
            await expectCode(.hashMismatch) { try await alice.uploadChunk(ContentHash.of(good), Array("jello".utf8)) }
            #expect(try await alice.missingChunks([ContentHash.of(good)]) == [ContentHash.of(good)])
            await expectCode(.invalidRequest) { try await alice.uploadChunk(ContentHash.empty, []) }
            let (s, _) = try await alice.raw(.PUT, "/v1/chunks/not-a-hash", body: good, contentType: "application/octet-stream")
            #expect(s == 400)
            let big = [UInt8](repeating: 7, count: WireLimits.maxChunkBody + 1)
            await expectCode(.payloadTooLarge) { try await alice.uploadChunk(ContentHash.of(big), big) }
        }
    }

    @Test(arguments: DatabaseKind.available) func knowingAHashGrantsNothing(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (alice, _) = try await server.device("alice")
            let (bob, _) = try await server.device("bob")
            let secret = Array("alice's diary".utf8)
            let h = ContentHash.of(secret)
            try await alice.uploadChunk(h, secret)
            // Bob learns nothing: the chunk is "missing" for him and he cannot download it.
            #expect(try await bob.missingChunks([h]) == [h])
            await expectCode(.notFound) { _ = try await bob.downloadChunk(h) }
            // Nor can he commit a file naming it without uploading it.
            let r = try await bob.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("x"),
                                                              kind: .file, base: nil, modified: Date(),
                                                              manifest: Manifest(chunks: [ChunkRef(hash: h, size: secret.count)])))
            #expect(r.missing == [h] && r.version?.uploaded == false)
            await expectCode(.incompleteContent) { _ = try await bob.complete(notes, version: r.version!.id) }
            await expectCode(.notFound) { _ = try await bob.downloadChunk(h) }
        }
    }

    /// #23 row 12: twelve 900 KB uploads at once against a 1 MB quota each passed the quota
    /// check before any was recorded: 2.7 MB of packs were written, eleven then refused. Now
    /// what is being written counts: one is stored, eleven refused before writing a byte.
    @Test(arguments: DatabaseKind.available) func parallelUploadsCannotWritePastTheQuota(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            try await server.user("dave", quota: 1_000_000)
            let (dave, _) = try await server.device("dave")
            var rng = SeededRandom.forTest("chunks.quota.parallel")
            let blobs = (0..<12).map { _ in rng.bytes(900_000) }
            let outcomes = await withTaskGroup(of: String.self) { group in
                for (i, b) in blobs.enumerated() {
                    group.addTask {
                        // A connection lost on a busy machine is tried again, as a device would.
                        for _ in 0..<3 {
                            do {
                                if i % 2 == 0 { try await dave.uploadChunks([b]) } else { try await dave.uploadChunk(ContentHash.of(b), b) }
                                return "stored"
                            } catch let e as ClientError where e.code == .serverUnreachable {
                                continue
                            } catch let e as ClientError { return e.code.rawValue } catch { return "\(error)" }
                        }
                        return "unreachable three times"
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == "stored" }.count == 1 && outcomes.filter { $0 == "storage_full" }.count == 11, "\(outcomes)")
            #expect(try await dave.account().used == 900_000)
            // On disk: the one chunk (a pack or a loose file), not twelve.
            var onDisk = 0
            let e = FileManager.default.enumerator(atPath: server.directory.url.appendingPathComponent("chunks").path)
            while let rel = e?.nextObject() as? String {
                guard !rel.contains(".sqlite"), let a = try? FileManager.default.attributesOfItem(atPath: server.directory.url.appendingPathComponent("chunks/" + rel).path),
                      a[.type] as? FileAttributeType == .typeRegular, let size = a[.size] as? Int else { continue }
                onDisk += size
            }
            #expect(onDisk < 1_200_000, "\(onDisk) bytes of chunks on disk (one chunk is 900,000)")
        }
    }

    @Test(arguments: DatabaseKind.available) func quotaIsEnforced(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            try await server.user("carol", quota: 100_000)
            let (carol, _) = try await server.device("carol")
            var rng = SeededRandom.forTest("chunks.quota")
            let small = rng.bytes(60_000)
            try await commitFile(carol, "a.bin", bytes: small)
            let more = rng.bytes(60_000)
            let m = Manifest.of(more)
            // The commit itself is refused before any byte is sent…
            await expectCode(.storageFull) {
                _ = try await carol.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("b.bin"),
                                                                kind: .file, base: nil, modified: Date(), manifest: m))
            }
            // …and so is a chunk upload beyond the quota.
            let blob = rng.bytes(50_000)
            await expectCode(.storageFull) { try await carol.uploadChunk(ContentHash.of(blob), blob) }
            let used = try await carol.account().used
            #expect(used <= 100_000)
            #expect(try await carol.changes(notes, after: 0).items.count == 1)
        }
    }
}
