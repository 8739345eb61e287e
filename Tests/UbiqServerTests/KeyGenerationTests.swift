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
}
