import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqTesting

/// #39 §2 revocation, the server's part: once an encrypted account's device list says its key
/// was rolled to a generation, a version sealed with an older one is refused (`key_missing`) —
/// a device that commits before it took the new key sends it again with the new one, so nothing
/// new is sealed with a key the revoked device holds. A plain account pays nothing.
@Suite("Key generations on the server")
struct KeyGenerationTests {
    @Test(arguments: DatabaseKind.available) func aVersionSealedWithARolledKeyIsRefused(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (client, _) = try await server.device("alice")
            func commit(_ p: String, sealed: String?) async throws -> CommitResponse {
                let m = try await upload(client, Array("content of \(p)".utf8))
                var c = CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path(p), kind: .file, base: nil, modified: Date(), manifest: m)
                c.sealed = sealed
                return try await client.commit(notes, c)
            }
            // No device list (plain, or encrypted before lists): anything goes.
            _ = try await commit("Documents/a.txt", sealed: "AAAA")
            _ = try await commit("Documents/plain.txt", sealed: nil)
            // The list says epoch 2: a record of epoch 1 is refused, one of epoch 2 or 3 is not.
            let ring = AccountKeyring(AccountKey.generate()).rolled()
            try await client.putAccountKey(name: DeviceKeyList.serverName, value: try DeviceKeyList(epoch: 2, entries: []).text(ring), replace: false)
            await expectCode(.keyMissing) { _ = try await commit("Documents/b.txt", sealed: "AAAA") }
            _ = try await commit("Documents/c.txt", sealed: "e2:AAAA")
            _ = try await commit("Documents/d.txt", sealed: "e3:AAAA")
            _ = try await commit("Documents/folderless.txt", sealed: nil)
            // In a batch, the stale one alone is refused.
            var batch: [CommitRequest] = []
            for (p, s) in [("Documents/e.txt", "e2:AAAA"), ("Documents/f.txt", "AAAA")] {
                let m = try await upload(client, Array("content of \(p)".utf8))
                var c = CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path(p), kind: .file, base: nil, modified: Date(), manifest: m)
                c.sealed = s
                batch.append(c)
            }
            let results = try await client.commitMany(notes, batch)
            #expect(results.count == 2 && results[0].response != nil && results[1].error?.code == .keyMissing, "\(results.map { $0.error?.code.rawValue ?? "ok" })")

            // Settings: a value sealed with epoch 1 (`data`) is refused, one of epoch 2 is not,
            // and a delete carries no key at all.
            let device = try await client.account().device
            func entry(_ key: String, _ value: KVValue?, _ wall: Int64) -> KVEntry {
                KVEntry(key: key, value: value, stamp: HLCTimestamp(wallMillis: Int64(Date().timeIntervalSince1970 * 1000) + wall, counter: 0), device: device)
            }
            await expectCode(.keyMissing) { _ = try await client.kvSet(notes, [entry("t1", .data(Data([1, 2, 3])), 0)]) }
            await expectCode(.keyMissing) { _ = try await client.kvSet(notes, [entry("t2", .array([.int(2), .data(Data([1]))]), 0), entry("t3", .data(Data([9])), 0)]) }
            _ = try await client.kvSet(notes, [entry("t2", .array([.int(2), .data(Data([1]))]), 1)])
            _ = try await client.kvSet(notes, [entry("t1", nil, 2)])
            let kept = try await client.kvAll(notes).entries.filter { $0.value != nil }.map(\.key)
            #expect(kept == ["t2"], "\(kept)")
        }
    }

    /// #39 §2 "a record moved to another item": an encrypted account's version is sealed for the
    /// item it is committed as, so the server does not file a new file under the item another
    /// device made at its path (a plain account's two creates of one path join into one item);
    /// it refuses with `path_exists` and names that item, alone and in a batch.
    @Test(arguments: DatabaseKind.available) func aSealedNewFileAtATakenPathIsToldTheItemThere(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (client, _) = try await server.device("alice")
            func request(_ p: String, _ text: String, sealed: String?) async throws -> CommitRequest {
                let m = try await upload(client, Array(text.utf8))
                var c = CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path(p), kind: .file, base: nil, modified: Date(), manifest: m)
                c.sealed = sealed
                return c
            }
            let first = try await client.commit(notes, try await request("Documents/one.txt", "first", sealed: "AAAA"))
            do {
                _ = try await client.commit(notes, try await request("Documents/one.txt", "second", sealed: "BBBB"))
                Issue.record("a sealed create joined another item")
            } catch let e as ClientError {
                #expect(e.code == .pathExists && e.item == first.item.id, "\(e)")
            }
            let batch = try await client.commitMany(notes, [try await request("Documents/two.txt", "new", sealed: "CCCC"),
                                                           try await request("Documents/one.txt", "third", sealed: "DDDD")])
            #expect(batch[0].response?.outcome == .created)
            #expect(batch[1].error?.code == .pathExists && batch[1].error?.item == first.item.id, "\(batch.map { $0.error.map { "\($0)" } ?? "ok" })")
            // Made again for that item, it is that item's conflict, as a join would have made it.
            var again = try await request("Documents/one.txt", "second", sealed: "EEEE")
            again.itemID = first.item.id
            let joined = try await client.commit(notes, again)
            #expect(joined.outcome == .conflict && joined.item.id == first.item.id && joined.version?.sealed == "EEEE")
            // A plain account's new file still joins.
            let plain = try await client.commit(notes, try await request("Documents/plain.txt", "p1", sealed: nil))
            let plainJoin = try await client.commit(notes, try await request("Documents/plain.txt", "p2", sealed: nil))
            #expect(plainJoin.item.id == plain.item.id && plainJoin.outcome == .conflict)
        }
    }
}
