import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqProtocol
import UbiqTesting

/// A big file another device is still uploading is downloaded as its chunks arrive (metadata
/// first makes it known at once; the fetches wait for chunks), not after the upload ends. The
/// uploader here is a bare API client, so the test decides when each chunk arrives.
@Suite("Streaming downloads", .serialized)
struct StreamingTests {
    /// A file's content as the server names it: each chunk with its hash.
    static func named(_ bytes: [UInt8], _ m: Manifest) -> [(ContentHash, [UInt8])] {
        var out: [(ContentHash, [UInt8])] = []
        var offset = 0
        for c in m.chunks {
            out.append((c.hash, Array(bytes[offset..<offset + c.size])))
            offset += c.size
        }
        return out
    }

    static func commitNew(_ client: UbiqAPIClient, _ container: ContainerID, path: String, _ m: Manifest) async throws -> (ItemID, VersionID) {
        let id = ItemID(uuid: UUID()), v = VersionID(uuid: UUID())
        _ = try await client.commit(container, CommitRequest(itemID: id, versionID: v, path: try RelativePath(validating: path), kind: .file,
                                                             base: nil, modified: Date(), manifest: m))
        return (id, v)
    }

    /// A file committed (metadata only) by a bare client of B's account, its chunks not sent yet.
    struct Pending {
        let uploader: UbiqAPIClient
        let container: ContainerID
        let bytes: [UInt8]
        let chunks: [(ContentHash, [UInt8])]
        let id: ItemID
        let version: VersionID
    }

    static func commitPending(_ fleet: Fleet, for b: TestDevice, path: String, size: Int, seedLabel: String) async throws -> Pending {
        let (uploader, _) = try await fleet.server.device("alice", name: "uploader")
        var rng = SeededRandom.forTest(seedLabel)
        let bytes = rng.bytes(size)
        let m = Manifest.of(bytes)
        let (id, v) = try await commitNew(uploader, b.config.container, path: path, m)
        return Pending(uploader: uploader, container: b.config.container, bytes: bytes, chunks: named(bytes, m), id: id, version: v)
    }

    @Test func aBigFileIsDownloadedWhileStillBeingUploaded() async throws {
        try await withFleet { fleet in
            let b = try await fleet.device("B")
            let p = try await Self.commitPending(fleet, for: b, path: "Documents/movie.bin", size: 6 << 20, seedLabel: "engine.streaming")
            let (uploader, container, bytes, chunks, id, v) = (p.uploader, p.container, p.bytes, p.chunks, p.id, p.version)
            for part in stride(from: 0, to: chunks.count, by: 40) {
                try await uploader.uploadChunks(named: Array(chunks[part..<min(chunks.count, part + 40)]))
            }
            // B holds the whole file while the server still has the version as not uploaded
            // (the uploader has not said it is complete).
            #expect(await eventually(timeout: .seconds(60)) { b.readBytes("Documents/movie.bin") == bytes })
            let before = try await uploader.versions(container, item: id)
            #expect(before.current?.id == v && before.current?.uploaded == false)
            _ = try await uploader.complete(container, version: v)
            // B sends nothing back: one version, no conflict, and it settles as current.
            #expect(await eventually {
                let s = await b.engine.status()
                let listed = await b.engine.listing().first { $0.path.string == "Documents/movie.bin" }
                return s.idle && listed?.status == .current && listed?.uploaded == true
            })
            let after = try await uploader.versions(container, item: id)
            #expect(after.current?.id == v && after.conflicts.isEmpty && after.others.isEmpty)
        }
    }

    @Test func aStreamThatStopsIsFinishedOnceTheUploadCompletes() async throws {
        try await withFleet { fleet in
            let b = try await fleet.device("B")
            let p = try await Self.commitPending(fleet, for: b, path: "Documents/paused.bin", size: 3 << 20, seedLabel: "engine.streaming.stop")
            let (uploader, container, bytes, chunks, v) = (p.uploader, p.container, p.bytes, p.chunks, p.version)
            try await uploader.uploadChunks(named: Array(chunks.prefix(chunks.count / 2)))
            // B starts, waits for the rest, and gives up when nothing arrives; nothing is placed.
            #expect(await eventually { await b.engine.status().downloads.running == 1 })
            #expect(await eventually(timeout: .seconds(45)) { await b.engine.status().downloads.running == 0 })
            #expect(!b.exists("Documents/paused.bin"))
            // The uploader comes back and finishes: B downloads it.
            try await uploader.uploadChunks(named: Array(chunks.suffix(from: chunks.count / 2)))
            _ = try await uploader.complete(container, version: v)
            #expect(await eventually(timeout: .seconds(60)) { b.readBytes("Documents/paused.bin") == bytes })
        }
    }
}
