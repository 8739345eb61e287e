import Crypto
import Foundation
import Testing
import UbiqCore
import UbiqServer
import UbiqStorage
import UbiqTesting

/// Chunks at rest (#39 §1): sealed with the server's key, bound to their names; what the chunk
/// folder holds reveals no content; a record changed, cut or moved under another name never
/// reads as a chunk; chunks stored before sealing still read; a key file that is lost or not
/// the fleet's stops the server instead of sealing with a new key in silence.
@Suite("Chunks sealed at rest")
struct SealingTests {
    static func ring() -> ServerKeyRing { ServerKeyRing(keys: [SymmetricKey(size: .bits256)]) }

    /// Seeded: every record opens to its chunk; each single-byte change, a cut, another name or
    /// another key does not open (and is not mistaken for a plaintext chunk).
    @Test func aRecordOpensOnlyAsWhatWasSealedUnderItsName() throws {
        var rng = SeededRandom.forTest("seal.records")
        let ring = Self.ring(), other = Self.ring()
        for _ in 0..<40 {
            let plain = rng.bytes(Int(rng.next() % 5_000))
            let hash = ContentHash.of(plain)
            let pack = PackBytes(capacity: plain.count + ChunkSeal.overhead)!
            #expect(try plain.withUnsafeBytes { try ChunkSeal.seal($0, as: hash, ring: ring, into: pack) })
            let record = pack.withBytes { Array($0) }
            #expect(record.count == plain.count + ChunkSeal.overhead)
            let opened = try record.withUnsafeBytes { try ChunkSeal.open($0, as: hash, ring: ring, verify: true) { Array($0) } }
            #expect(opened == plain)
            var changed = record
            let at = Int(rng.next() % UInt64(record.count))
            changed[at] ^= UInt8(1 + rng.next() % 255)
            #expect(throws: StorageError.self, "byte \(at) changed") { try changed.withUnsafeBytes { try ChunkSeal.open($0, as: hash, ring: ring, verify: false) { _ in } } }
            #expect(throws: StorageError.self, "cut") { try record.dropLast().withUnsafeBytes { try ChunkSeal.open($0, as: hash, ring: ring, verify: false) { _ in } } }
            #expect(throws: StorageError.self, "another name") {
                try record.withUnsafeBytes { try ChunkSeal.open($0, as: ContentHash.of(plain + [0]), ring: ring, verify: false) { _ in } }
            }
            let unknown = #expect(throws: StorageError.self, "another key") { try record.withUnsafeBytes { try ChunkSeal.open($0, as: hash, ring: other, verify: false) { _ in } } }
            #expect(unknown?.message.contains(ServerKeyRing.text(ring.currentID)) == true, "the message names the key")
        }
    }

    /// A chunk folder made before sealing keeps reading; what is written afterwards is sealed;
    /// markers in the chunks' content are nowhere in the folder's files.
    @Test func theChunkFolderHoldsNoContentAndOldChunksStillRead() async throws {
        let dir = try TempDirectory("ubiq-seal")
        defer { dir.remove() }
        var rng = SeededRandom.forTest("seal.folder")
        let root = dir.url.appendingPathComponent("chunks")
        let old = Array("plaintext from before: CANARY-OLD-7f3a ".utf8) + rng.bytes(2_000)
        try await FolderChunkStore(root: root, recentBytes: 0).putMany([(ContentHash.of(old), old)])
        let store = SealedChunkStore(try FolderChunkStore(root: root, recentBytes: 0), ring: Self.ring())
        #expect(try await store.get(ContentHash.of(old)) == old, "a chunk stored before sealing still reads")
        var chunks: [(ContentHash, [UInt8])] = []
        for i in 0..<50 {
            let c = Array("CANARY-\(i)-9c1e ".utf8) + rng.bytes(Int(rng.next() % 9_000)) + Array(" CANARY-END-\(i)".utf8)
            chunks.append((ContentHash.of(c), c))
        }
        try await store.putMany(Array(chunks[..<25]))
        for (h, c) in chunks[25..<30] { try await store.put(h, c) }
        let body = PackBytes(capacity: 1 << 20)!
        var ranges: [(ContentHash, Range<Int>)] = []
        for (h, c) in chunks[30...] { let s = body.count; _ = c.withUnsafeBytes { body.append($0) }; ranges.append((h, s..<body.count)) }
        try await store.putMany(body: body, chunks: ranges, hashesChecked: false)
        #expect(try await store.getMany(chunks.map(\.0), limit: 1 << 20) == chunks.map(\.1))
        // Every byte under chunks/ (packs, loose files, the index): no marker but the old chunk's.
        let found = try Self.markers(under: root, "CANARY-")
        #expect(found == ["CANARY-OLD-7f3a"], "\(found)")
    }

    /// Flipped bytes in a pack: the chunk is refused (`chunk_damaged`), never handed out changed.
    @Test func aChangedPackIsRefusedNotReadAsContent() async throws {
        let dir = try TempDirectory("ubiq-seal")
        defer { dir.remove() }
        var rng = SeededRandom.forTest("seal.tamper")
        let root = dir.url.appendingPathComponent("chunks")
        let store = SealedChunkStore(try FolderChunkStore(root: root, recentBytes: 0), ring: Self.ring())
        let c = rng.bytes(6_000)
        try await store.putMany([(ContentHash.of(c), c)])
        let pack = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("packs").path).first { $0.hasSuffix(".pack") }!
        let path = root.appendingPathComponent("packs").appendingPathComponent(pack).path
        var bytes = try #require(try FileIO.readAll(path))
        bytes[100] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        for verify in [false, true] {
            let e = await #expect(throws: StorageError.self) { try await store.getMany([ContentHash.of(c)], limit: 1 << 20, verify: verify) }
            #expect(e?.code == .chunkDamaged)
        }
    }

    /// The database remembers the keys chunks were sealed with: a server with another key file,
    /// or whose key file went missing, does not start (and makes no new key over the lost one).
    @Test func aLostOrForeignKeyFileStopsTheServer() async throws {
        let dir = try TempDirectory("ubiq-seal")
        defer { dir.remove() }
        let data = dir.url.appendingPathComponent("server")
        let first = try await ServerServices.embedded(at: data, environment: [:])
        let keyFile = data.appendingPathComponent("server.key").path
        #expect(first.keyFileMade == keyFile)
        var st = stat()
        #expect(stat(keyFile, &st) == 0 && st.st_mode & 0o777 == 0o600)
        let c = Array("CANARY-server-2b".utf8)
        try await first.chunks.putMany([(ContentHash.of(c), c)])
        // Again: the same key, nothing made.
        let again = try await ServerServices.embedded(at: data, environment: [:])
        #expect(again.keyFileMade == nil)
        #expect(try await again.chunks.get(ContentHash.of(c)) == c)
        // Another key file: refused, naming the key the chunks need.
        let foreign = dir.url.appendingPathComponent("foreign.key").path
        try Self.ring().write(to: foreign)
        let refused = await #expect(throws: APIFailure.self) { _ = try await ServerServices.embedded(at: data, keyFile: foreign, environment: [:]) }
        #expect(refused?.message.contains("does not hold") == true, "\(refused?.message ?? "")")
        // The key file lost: refused, and no new one made in its place.
        try FileManager.default.moveItem(atPath: keyFile, toPath: keyFile + ".saved")
        let lost = await #expect(throws: APIFailure.self) { _ = try await ServerServices.embedded(at: data, environment: [:]) }
        #expect(lost?.message.contains("is missing") == true, "\(lost?.message ?? "")")
        #expect(!FileManager.default.fileExists(atPath: keyFile))
        // A key file others may read: refused.
        try FileManager.default.moveItem(atPath: keyFile + ".saved", toPath: keyFile)
        chmod(keyFile, 0o644)
        let open = await #expect(throws: APIFailure.self) { _ = try await ServerServices.embedded(at: data, environment: [:]) }
        #expect(open?.message.contains("chmod 600") == true, "\(open?.message ?? "")")
    }

    /// A rotation's pass (and a conversion's): every record sealed with an older key, or stored
    /// before sealing, is sealed again with the current key, on the folder and in a bucket; then
    /// the ring without the older key reads everything, and no old marker is left in the folder.
    @Test(arguments: StoreKind.available)
    func aPassSealsEverythingAgainWithTheCurrentKey(_ kind: StoreKind) async throws {
        let dir = try TempDirectory("ubiq-seal")
        defer { dir.remove() }
        var rng = SeededRandom.forTest("seal.reseal.\(kind)")
        guard let inner = try await kind.make(in: dir) else { return }
        var chunks: [(ContentHash, [UInt8])] = []
        for i in 0..<30 {
            let c = Array("CANARY-\(i < 10 ? "PLAIN" : "KEYA")-\(i) ".utf8) + rng.bytes(Int(rng.next() % 6_000))
            chunks.append((ContentHash.of(c), c))
        }
        try await inner.putMany(Array(chunks[..<5]))  // before sealing: one pack …
        for (h, c) in chunks[5..<10] { try await inner.put(h, c) }  // … and (on the folder) loose files
        let a = Self.ring()
        try await SealedChunkStore(inner, ring: a).putMany(Array(chunks[10...]))
        let rotated = a.rotated()
        let store = SealedChunkStore(inner, ring: rotated)
        #expect(try await store.reseal() == 30)
        #expect(try await store.reseal() == 0, "a second pass finds nothing to do")
        var keys: [UInt64?] = []
        try await inner.visitMany(chunks.map(\.0), limit: 1 << 24, verify: false) { _, record in keys.append(ChunkSeal.keyID(of: record)) }
        #expect(keys.count == 30 && keys.allSatisfy { $0 == rotated.currentID }, "\(keys)")
        let newOnly = SealedChunkStore(inner, ring: rotated.currentOnly())
        #expect(try await newOnly.getMany(chunks.map(\.0), limit: 1 << 24) == chunks.map(\.1))
        if kind == .folder {
            #expect(try Self.markers(under: dir.url.appendingPathComponent("chunks"), "CANARY-").isEmpty)
        }
    }

    /// A data folder from before sealing: the first start seals with a new key and has a pass
    /// due; the pass converts every chunk, and then none is due.
    @Test func theFirstStartOfAStoreFromBeforeSealingConvertsIt() async throws {
        let dir = try TempDirectory("ubiq-seal")
        defer { dir.remove() }
        let data = dir.url.appendingPathComponent("server")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let c = Array("CANARY-before-41".utf8) + [UInt8](repeating: 7, count: 3_000)
        try await FolderChunkStore(root: data.appendingPathComponent("chunks"), recentBytes: 0).putMany([(ContentHash.of(c), c)])
        let services = try await ServerServices.embedded(at: data, environment: [:])
        #expect(try await services.keyState().resealDue)
        #expect(try await services.resealIfDue() == 1)
        #expect(try await services.keyState().resealDue == false)
        #expect(try await services.resealIfDue() == nil)
        #expect(try await services.chunks.get(ContentHash.of(c)) == c)
        #expect(try Self.markers(under: data.appendingPathComponent("chunks"), "CANARY-").isEmpty)
        // A rotation: the next start seals with the new key and has a pass due again.
        let id = try await services.rotateKey()
        let next = try await ServerServices.embedded(at: data, environment: [:])
        let state = try await next.keyState()
        #expect(state.ids.first == id && state.ids.count == 2 && state.resealDue)
        #expect(try await next.resealIfDue() == 1)
        #expect(try await next.chunks.get(ContentHash.of(c)) == c)
    }

    /// Through a real server, on the folder and in a bucket: content with markers uploaded and
    /// read back whole; no marker in any file under the chunk folder, in any object of the
    /// bucket, or in the server's log.
    @Test(arguments: StoreKind.available)
    func whatAServerStoresRevealsNoContent(_ kind: StoreKind) async throws {
        let blobs = kind.blobs
        let server = try await TestServer.start(blobs: blobs)
        defer { Task { await server.stop() } }
        try await server.user("alice")
        let (client, _) = try await server.device("alice")
        for i in 0..<12 {
            let text = "CANARY-upload-\(i) " + String(repeating: "secret words \(i) ", count: 200 * (i + 1))
            let r = try await commitFile(client, "Notes/\(i).txt", text)
            #expect(try await download(client, version: try #require(r.version?.id)) == text)
        }
        #expect(try Self.markers(under: server.directory.url, "CANARY-").isEmpty)
        #expect(!server.log.recent.joined(separator: "\n").contains("CANARY-"))
        if case .s3(let endpoint, let bucket, let region) = blobs, let s = S3TestStore.store {
            let s3 = try S3Client(endpoint: endpoint, bucket: bucket, region: region, credentials: s.credentials)
            let objects = try await s3.list(prefix: "")
            #expect(!objects.isEmpty)
            for o in objects {
                let bytes = try await s3.get(o.key) ?? []
                #expect(!String(decoding: bytes, as: UTF8.self).contains("CANARY-"), "\(o.key)")
            }
        }
    }

    /// The distinct markers `prefix…` (up to a space or the end of printable text) in every file under `root`.
    static func markers(under root: URL, _ prefix: String) throws -> Set<String> {
        var out = Set<String>()
        let needle = Array(prefix.utf8)
        let files = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
        for f in files {
            var st = stat()
            guard lstat(root.appendingPathComponent(f).path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
            guard let bytes = try FileIO.readAll(root.appendingPathComponent(f).path), bytes.count >= needle.count else { continue }
            var i = 0
            while i <= bytes.count - needle.count {
                if bytes[i] == needle[0], Array(bytes[i..<i + needle.count]) == needle {
                    var j = i + needle.count
                    while j < bytes.count, bytes[j] > 32, bytes[j] < 127 { j += 1 }
                    out.insert(String(decoding: bytes[i..<j], as: UTF8.self))
                    i = j
                } else { i += 1 }
            }
        }
        return out
    }
}
