import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
@testable import UbiqServer
import UbiqTesting

/// #45 row 1: a manifest delta expanded before any limit applied — 23 pieces of
/// `copy [0, 65536]` (956 bytes) built 1.5 M references, a 3.8 KB batch of four peaked at 604 MB.
@Suite("Delta expansion")
struct DeltaExpansionTests {
    /// A base of 65,536 references to one never-uploaded one-byte chunk (within the reference
    /// budget), and deltas against it.
    static let chunk = ChunkRef(hash: ContentHash.of([7]), size: 1)

    static func base(_ client: UbiqAPIClient, _ name: String, count: Int = 65_536) async throws -> (ItemID, VersionID) {
        let m = Manifest(chunks: Array(repeating: chunk, count: count))
        let r = try await client.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("Documents/\(name)"),
                                                             kind: .file, base: nil, modified: Date(), manifest: m))
        return (r.item.id, try #require(r.version).id)
    }

    static func copies(_ n: Int, of base: VersionID, item: ItemID, name: String, count: Int = 65_536) -> CommitRequest {
        let pieces = Array(repeating: ManifestPiece.copy(from: 0, count: count), count: n)
        let h = ContentHash.of(Array("not the digest".utf8))
        return CommitRequest(itemID: item, versionID: VersionID(uuid: UUID()), path: path("Documents/\(name)"), kind: .file, base: base,
                             modified: Date(), manifest: nil, manifestDelta: ManifestDelta(base: base, pieces: pieces, size: n * count, hash: h, digest: h))
    }

    /// `body` fails with `code` and a message holding `words`.
    static func expectRefusal(_ code: ErrorCode, saying words: String, sourceLocation: SourceLocation = #_sourceLocation,
                              _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected \(code.rawValue), got success", sourceLocation: sourceLocation)
        } catch let e as ClientError {
            #expect(e.code == code && e.message.contains(words), "\(e)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected \(code.rawValue), got \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func aDeltaPastTheManifestLimitIsRefusedFromItsPiecesAlone() async throws {
        try await withServer { server in
            let (c, _) = try await server.device("alice")
            let (item, base) = try await Self.base(c, "base.bin")
            // One commit: 23 × 65,536 = 1.5 M references.
            await Self.expectRefusal(.invalidRequest, saying: "1000000 chunk references") {
                _ = try await c.commit(notes, Self.copies(23, of: base, item: item, name: "base.bin"))
            }
            // The batch of four (the 604 MB request): refused as a whole, from the bodies.
            await expectCode(.invalidRequest) {
                _ = try await c.commitMany(notes, (0..<4).map { _ in Self.copies(23, of: base, item: item, name: "base.bin") })
            }
            // Many commits each under the limit, together past it: refused as a whole too.
            await expectCode(.invalidRequest) {
                _ = try await c.commitMany(notes, (0..<16).map { _ in Self.copies(1, of: base, item: item, name: "base.bin") })
            }
            let versions = try await c.versions(notes, item: item)
            #expect(versions.current?.id == base && versions.conflicts.isEmpty && versions.others.isEmpty, "nothing was stored")
            #expect(try await c.account().user == "alice", "the server is still up")
            // A delta that fits and is right still commits (a new chunk after the whole base).
            let extra = ChunkRef(hash: ContentHash.of([8]), size: 1)
            let out = Array(repeating: Self.chunk, count: 65_536) + [extra]
            let d = ManifestDelta(base: base, pieces: [.copy(from: 0, count: 65_536), .chunk(extra)], size: out.count,
                                  hash: ManifestDelta.digest(out), digest: ManifestDelta.digest(out))
            let ok = try await c.commit(notes, CommitRequest(itemID: item, versionID: VersionID(uuid: UUID()), path: path("Documents/base.bin"), kind: .file,
                                                             base: base, modified: Date(), manifest: nil, manifestDelta: d))
            #expect(ok.outcome == .updated && ok.version?.size == 65_537)
        }
    }

    /// Within the manifest limit but past what the account may still hold: `storage_full`
    /// before the delta is built.
    @Test func aDeltaPastTheAccountsReferenceRoomIsStorageFull() async throws {
        try await withServer { server in
            try await server.user("tight", quota: 1 << 20)  // 65,536 entries (the floor)
            let (c, _) = try await server.device("tight")
            // 65,535 chunk references and the version itself: the whole budget.
            let (item, base) = try await Self.base(c, "base.bin", count: 65_535)
            await Self.expectRefusal(.storageFull, saying: "may hold 0 more") {
                _ = try await c.commit(notes, Self.copies(1, of: base, item: item, name: "base.bin", count: 65_535))
            }
        }
    }

    /// The request-wide count from the bodies: never traps on hostile counts, refuses exactly
    /// when the sum passes the limit.
    @Test func theRequestCountNeverTrapsAndRefusesPastTheLimit() {
        var rng = SeededRandom.forTest("fuzz.commit-batch")
        let n = FuzzCases.count(2_000)
        var refused = 0
        for _ in 0..<n {
            var commits: [CommitRequest] = []
            var expected = 0, overflow = false
            for _ in 0..<Int.random(in: 0...12, using: &rng) {
                let pieces = (0..<Int.random(in: 0...6, using: &rng)).map { _ -> ManifestPiece in
                    Bool.random(using: &rng) ? .copy(from: 0, count: FuzzTests.nasty(&rng, upTo: 400_000)) : .chunk(Self.chunk)
                }
                let d = ManifestDelta(base: VersionID(uuid: UUID()), pieces: pieces, size: 0, hash: Self.chunk.hash, digest: Self.chunk.hash)
                commits.append(CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("Documents/x"), kind: .file,
                                             base: nil, modified: Date(), manifest: nil, manifestDelta: d))
                let k = d.expandedCount ?? 0
                if !overflow { (expected, overflow) = expected.addingReportingOverflow(k) }
            }
            let past = overflow || expected > CommitExpansion.perRequest
            do {
                try CommitExpansion.checkRequest(commits)
                #expect(!past, "seed \(rng.seed): \(expected) references taken")
            } catch {
                #expect(past, "seed \(rng.seed): \(expected) references refused")
                refused += 1
            }
        }
        print("[fuzz.commit-batch] \(n) requests: \(refused) refused")
        #expect(refused > 0 && refused < n)
    }
}
