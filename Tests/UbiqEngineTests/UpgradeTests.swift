import Foundation
import GRDB
import Testing
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqTesting

/// State written by a build from before a file's hash became its chunk list's hash (stored
/// hashes were SHA-256 of the whole file) is upgraded in place, on the server and on devices,
/// without a re-upload, a new version or a conflict.
@Suite("Upgrades of stored state", .serialized)
struct UpgradeTests {
    @Test func hashesStoredAsWholeFileDigestsAreRederivedWithoutChurn() async throws {
        let fleet = try await serverWithTwoDevices()
        var server = fleet.server
        let (a, b, port) = (fleet.a, fleet.b, server.port)
        defer { a.remove(); b.remove() }
        var rng = SeededRandom.forTest("upgrade.content-hash")
        let files: [String: [UInt8]] = ["Documents/small.txt": Array("one chunk".utf8), "Documents/big.bin": rng.bytes(600 << 10),
                                        "Documents/empty.txt": []]
        for (p, bytes) in files { try a.write(p, bytes: bytes) }
        #expect(await eventually { files.allSatisfy { b.readBytes($0.key) == $0.value } })
        let client = UbiqAPIClient(baseURL: server.baseURL, token: a.config.token)
        #expect(await eventually { await a.engine.status().uploads.running + a.engine.status().uploads.queued == 0 })
        await a.stop(); await b.stop()
        await server.stop(keepData: true)

        // Back to the old scheme: every stored hash of these files as the whole file's SHA-256,
        // and the migrations not yet run.
        let old = Dictionary(uniqueKeysWithValues: files.values.map { (Manifest.of($0).hash.hex, ContentHash.of($0).hex) })
        #expect(old.filter { $0.key != $0.value }.count == 2, "the empty file's hash is the same in both schemes")
        let serverDB = try DatabaseQueue(path: server.directory.url.appendingPathComponent("metadata.sqlite").path)
        try await serverDB.write { db in
            for (new, was) in old { try db.execute(sql: "UPDATE versions SET hash = ? WHERE hash = ?", arguments: [was, new]) }
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v3-content-hash'")
        }
        try serverDB.close()
        for d in [a, b] {
            let db = try DatabaseQueue(path: d.home.stateDatabase(d.config.container).path)
            try await db.write { db in
                for (new, was) in old {
                    for column in ["synced.hash", "synced.stamp_hash", "remote.hash"] {
                        let parts = column.split(separator: ".")
                        try db.execute(sql: "UPDATE \(parts[0]) SET \(parts[1]) = ? WHERE \(parts[1]) = ?", arguments: [was, new])
                    }
                }
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v4-content-hash'")
                if d === b {
                    // B had learnt of big.bin's version but not yet fetched it (its Remote tree holds the old hash).
                    try db.execute(sql: """
                        DELETE FROM chunk_index WHERE item IN (SELECT item FROM remote WHERE path = 'Documents/big.bin');
                        DELETE FROM synced WHERE path = 'Documents/big.bin'
                        """)
                }
            }
            try db.close()
        }
        try FileManager.default.removeItem(at: b.url("Documents/big.bin"))

        // The upgraded server and devices agree again, B fetches what it had not, and nothing
        // was committed anew.
        server = try await TestServer.start(directory: server.directory, port: port)
        try await a.restart(); try await b.restart()
        #expect(await eventually { b.readBytes("Documents/big.bin") == files["Documents/big.bin"] })
        let items = try await client.changes(a.config.container, after: 0).items.filter { $0.kind == .file }
        #expect(items.count == 3)
        for item in items {
            #expect(item.current?.hash == files[item.path.string].map { Manifest.of($0).hash }, "\(item.path)")
            let v = try await client.versions(a.config.container, item: item.id)
            #expect(v.others.isEmpty && v.conflicts.isEmpty && item.conflictCount == 0, "\(item.path): \(v.others.count) other, \(v.conflicts.count) conflict versions")
        }
        for d in [a, b] {
            #expect(await eventually { await d.engine.status().state == .online })
            await d.engine.syncNow()
            let st = await d.engine.status()
            #expect(st.uploads.queued + st.uploads.running + st.downloads.queued + st.downloads.running == 0)
        }
        // And edits still flow both ways, as small as ever.
        var edited = files["Documents/big.bin"]!
        edited[1000] ^= 0xFF
        try b.write("Documents/big.bin", bytes: edited)
        #expect(await eventually { a.readBytes("Documents/big.bin") == edited })
        try a.write("Documents/small.txt", "edited on A")
        #expect(await eventually { b.read("Documents/small.txt") == "edited on A" })
        for (p, _) in files { #expect(a.readBytes(p) == b.readBytes(p), "\(p)") }
        let after = try await client.changes(a.config.container, after: 0).items.filter { $0.kind == .file }
        #expect(after.allSatisfy { $0.conflictCount == 0 })
        await a.stop(); await b.stop()
        await server.stop()
    }
}
