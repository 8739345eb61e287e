import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqServer
import UbiqStorage
import UbiqTesting

/// `ubiq server migrate`: an embedded server copied into PostgreSQL and a bucket; its devices
/// carry on against the new server with no new sign-in.
@Suite("Moving up: migrate", .enabled(if: S3TestStore.runs && PostgresTestDatabase.runs))
struct MigrationTests {
    @Test func anEmbeddedServerMovesIntoPostgreSQLAndABucketAndItsDevicesCarryOn() async throws {
        let dir = try TempDirectory("ubiq-migrate")
        let old = try await TestServer.start(directory: dir)
        let port = old.port
        try await old.user("alice")
        try await old.user("bob")
        let (laptop, lid) = try await old.device("alice")
        let (phone, pid) = try await old.device("alice", name: "phone")
        let (bob, bid) = try await old.device("bob")
        var rng = SeededRandom.forTest("migrate")
        // A history: files (some big, many chunks), a folder, versions, a conflict, the trash, settings.
        var files: [(ItemID, VersionID, [UInt8])] = []
        for i in 0..<12 {
            let bytes = rng.bytes(Int.random(in: 10...400_000, using: &rng))
            let r = try await commitFile(laptop, "Documents/f\(i).bin", bytes: bytes)
            files.append((r.item.id, try #require(r.version?.id), bytes))
        }
        let edited = try await commitFile(laptop, "Documents/f0.bin", bytes: Array("second version".utf8), item: files[0].0, base: files[0].1)
        _ = try await commitFile(phone, "Documents/f0.bin", bytes: Array("a conflict".utf8), item: files[0].0, base: files[0].1)
        _ = try await laptop.delete(notes, item: files[1].0)
        _ = try await bob.kvSet(notes, [KVEntry(key: "theme", value: .string("dark"), stamp: HLCTimestamp(wallMillis: 5, counter: 0), device: bid)])
        _ = try await phone.kvSet(notes, [KVEntry(key: "size", value: .int(12), stamp: HLCTimestamp(wallMillis: 6, counter: 0), device: pid)])
        for name in ["Documents/folder", "Documents/gone"] {
            _ = try await laptop.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path(name),
                                                             kind: .folder, base: nil, modified: Date(), manifest: nil))
        }
        // An end-to-end encrypted account, as its device writes it: a sealed key, a sealed name,
        // a sealed chunk and a version with its sealed record.
        try await old.user("carol")
        let (carol, _) = try await old.device("carol")
        let carolKey = AccountKey.generate(), recovery = RecoveryKey.generate()
        let keys = carolKey.keys(for: notes)
        try await carol.putAccountKey(name: "recovery", value: recovery.seal(carolKey, user: "carol"), replace: false)
        let secret = Array("a sealed file".utf8), sealedChunk = keys.chunks.seal(Array("a sealed file".utf8))
        let chunkName = ContentHash.of(sealedChunk)
        try await carol.uploadChunks(named: [(chunkName, sealedChunk)])
        let sealedManifest = Manifest(chunks: [ChunkRef(hash: chunkName, size: secret.count)])
        let sealedVersion = VersionID(uuid: UUID()), sealedItemID = ItemID(uuid: UUID())
        let record = RecordCipher(keys: keys).seal(.init(modified: Date(timeIntervalSince1970: 1_000_000_000), permissions: 0o640,
                                                         hash: sealedManifest.hash, size: sealedManifest.size), version: sealedVersion, item: sealedItemID)
        let sealedPath = try keys.names.seal(path: path("Documents/sealed.txt"))
        _ = try await carol.commit(notes, CommitRequest(itemID: sealedItemID, versionID: sealedVersion, path: sealedPath, kind: .file, base: nil,
                                                        modified: Date(), manifest: sealedManifest, sealed: record))
        let alice = try #require(try await old.services.metadata.account(named: "alice")).id
        let roomBefore = try await old.services.metadata.referenceRoom(accountID: alice)
        let feedBefore = try await laptop.changes(notes, after: 0)
        let versionsBefore = try await laptop.versions(notes, item: files[0].0)
        let trashBefore = try await laptop.trash(notes)
        let kvBefore = try await phone.kvAll(notes)
        let usageBefore = try await laptop.account()
        await old.stop(keepData: true)

        guard let pg = try await PostgresTestDatabase.fresh() else { return }
        let blobs = StoreKind.s3.blobs
        let report = try await Migration.run(data: dir.url, database: pg, blobs: blobs)
        #expect(report.rows["accounts"] == 3 && report.rows["tokens"] == 4 && report.rows["account_keys"] == 1 && report.chunks > 12)
        #expect(report.rows == report.rowsAfter)
        // Again: refused, nothing doubled.
        await #expect(throws: APIFailure.self) { _ = try await Migration.run(data: dir.url, database: pg, blobs: blobs) }

        // The new server where the old one listened: the devices' tokens still work.
        // It seals with the embedded server's key, which the migration bound the database to.
        let new = try await TestServer.start(port: port, database: .postgres(pg), blobs: blobs, keyFile: dir.url.appendingPathComponent("server.key").path)
        let laptop2 = UbiqAPIClient(baseURL: new.baseURL, token: laptop.token)
        let feedAfter = try await laptop2.changes(notes, after: 0)
        #expect(feedAfter.items == feedBefore.items && feedAfter.cursor == feedBefore.cursor)
        let versionsAfter = try await laptop2.versions(notes, item: files[0].0)
        #expect(versionsAfter.current == versionsBefore.current && versionsAfter.conflicts == versionsBefore.conflicts
                && versionsAfter.others == versionsBefore.others)
        #expect(versionsAfter.current?.id == edited.version?.id)
        #expect(try await laptop2.trash(notes).items.map(\.id) == trashBefore.items.map(\.id))
        #expect(try await UbiqAPIClient(baseURL: new.baseURL, token: phone.token).kvAll(notes).entries == kvBefore.entries)
        #expect(try await laptop2.account().used == usageBefore.used)
        // Folders counted once (the copy's rows passed the folders' trigger too).
        #expect(try await new.services.metadata.referenceRoom(accountID: alice) == roomBefore)
        for (_, v, bytes) in files.dropFirst(2) { #expect(try await downloadBytes(laptop2, version: v) == bytes) }
        // And they carry on: a new file through the new server, seen by another device.
        let fresh = try await commitFile(laptop2, "Documents/after.txt", "after the move")
        let seen = try await UbiqAPIClient(baseURL: new.baseURL, token: bob.token).changes(notes, after: 0)
        #expect(seen.items.isEmpty)  // bob's account holds nothing of alice's
        #expect(try await UbiqAPIClient(baseURL: new.baseURL, token: phone.token).changes(notes, after: feedBefore.cursor).items.map(\.id) == [fresh.item.id])
        // The encrypted account opens as before: its sealed key, name, record and chunk came across.
        let carol2 = UbiqAPIClient(baseURL: new.baseURL, token: carol.token)
        #expect(try recovery.open(try #require(try await carol2.accountKeys()["recovery"]), user: "carol") == carolKey)
        let sealedItem = try #require(try await carol2.changes(notes, after: 0).items.first { $0.path == sealedPath })
        let v = try #require(sealedItem.current)
        #expect(try keys.names.open(path: sealedItem.path) == path("Documents/sealed.txt"))
        let fields = try RecordCipher(keys: keys).open(try #require(v.sealed), version: v.id, item: sealedItem.id)
        #expect(fields.modified == Date(timeIntervalSince1970: 1_000_000_000) && fields.permissions == 0o640 && fields.hash == v.hash)
        #expect(try await carol2.downloadChunk(chunkName).withUnsafeBytes { try keys.chunks.open($0) } == secret)
        _ = lid
        await new.stop()
        dir.remove()
    }
}
