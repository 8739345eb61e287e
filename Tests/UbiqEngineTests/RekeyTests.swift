import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
import UbiqTesting

/// #39 §2 `ubiq rekey` in the engine: after the account's key is rolled, each document in step
/// goes up once as a new version sealed with the new key, and another device places it from its
/// own copy (the same content: no chunk fetched, the file not rewritten); run again, nothing
/// goes up; a document being edited is left for the next run, not sent twice.
@Suite("End-to-end encryption: rekey", .serialized)
struct RekeyTests {
    @Test func eachDocumentGoesUpOnceAndTheOtherDevicePlacesItFromItsOwnCopy() async throws {
        try await withFleet(backend: .encrypted) { fleet in
            let a = try await fleet.device("A")
            let b = try await fleet.device("B", wrap: { DishonestServer($0) })
            let counting = try #require(b.server as? DishonestServer)
            var rng = SeededRandom.forTest("e2e.rekey")
            let big = rng.bytes(3_000_000)
            let small = (0..<20).map { _ in rng.bytes(Int.random(in: 1...4_000, using: &rng)) }
            try a.write("Documents/big.bin", bytes: big)
            for (i, s) in small.enumerated() { try a.write("Documents/small/\(i).bin", bytes: s) }
            #expect(await converge(a, b, timeout: .seconds(60)), "\(describeDiff(a, b))")
            await b.engine.syncNow()
            let inodes = try inodeNumbers(b)

            // Before a roll, every document is sealed with the newest key already.
            let first = try await a.engine.rekey()
            #expect(first == { var r = RekeyReport(epoch: 1); r.current = 21; return r }(), "\(first)")

            let ring = try AccountKeyring(text: try #require(a.config.accountKey)).rolled()
            #expect(a.engine.keyring?.update(ring) == true && b.engine.keyring?.update(ring) == true)
            let fetched = counting.chunksSent
            let report = try await a.engine.rekey()
            #expect(report == { var r = RekeyReport(epoch: 2); r.resealed = 21; return r }(), "\(report)")

            // On the server: every current version sealed with epoch 2.
            let server = SealedSyncServer(inner: UbiqAPIClient(baseURL: fleet.server.baseURL, token: a.config.token, trusting: fleet.server.trusted),
                                          keyring: SharedKeyring(ring, container: a.config.container))
            let items = try await server.changes(a.config.container, after: 0, limit: 100).items.filter { $0.kind == .file }
            #expect(items.count == 21 && items.allSatisfy { $0.current?.sealed?.hasPrefix("e2:") == true }, "\(items.map { $0.current?.sealed?.prefix(3) ?? "-" })")

            // B takes the new versions from its own files: no chunk fetched, no file rewritten.
            await b.engine.syncNow()
            _ = await eventually(timeout: .seconds(30)) { await b.engine.status().idle }
            let s = await b.engine.status()
            #expect(s.idle && s.conflicts == 0 && s.errors.isEmpty, "\(s)")
            #expect(counting.chunksSent == fetched, "B fetched \(counting.chunksSent - fetched) chunks")
            #expect(try inodeNumbers(b) == inodes)
            #expect(b.readBytes("Documents/big.bin") == big)
            let listed = try await b.engine.query(QuerySpec(predicate: "name == 'big.bin'", scope: "data"))
            #expect(listed.count == 1 && listed.allSatisfy { !$0.conflict && $0.status == .current }, "\(listed)")
            // And a later pass wants nothing more of the server.
            await b.engine.syncNow()
            #expect(counting.chunksSent == fetched)

            // Run again: nothing goes up.
            let again = try await a.engine.rekey()
            #expect(again == { var r = RekeyReport(epoch: 2); r.current = 21; return r }(), "\(again)")
            #expect(await converge(a, b))
        }
    }

    /// A plain account has nothing to seal again: a clear refusal.
    @Test func aPlainAccountIsRefused() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A")
            do {
                _ = try await a.engine.rekey()
                Issue.record("a plain account was rekeyed")
            } catch let e as EngineError {
                #expect(e.code == .invalidRequest && e.message.contains("not encrypted end to end"), "\(e)")
            }
        }
    }

    func inodeNumbers(_ d: TestDevice) throws -> [String: UInt64] {
        var out: [String: UInt64] = [:]
        for (p, content) in d.snapshot() where content != nil {
            let attrs = try FileManager.default.attributesOfItem(atPath: d.url(p).path)
            out[p] = (attrs[.systemFileNumber] as? NSNumber)?.uint64Value
        }
        return out
    }
}
