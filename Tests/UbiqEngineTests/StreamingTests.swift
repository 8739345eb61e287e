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

    @Test(arguments: Backend.available)
    func aBigFileIsDownloadedWhileStillBeingUploaded(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
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

    /// A stream goes at the uploader's pace; a local change made meanwhile is not held up
    /// behind it: the download steps aside between windows and resumes after the change is synced.
    @Test func aLocalChangeIsNotHeldUpBehindAStream() async throws {
        try await withFleet { fleet in
            let b = try await fleet.device("B")
            // Over three download windows (1,024 chunks each).
            let p = try await Self.commitPending(fleet, for: b, path: "Documents/long.bin", size: 112 << 20, seedLabel: "engine.streaming.aside")
            let window = 1024
            #expect(p.chunks.count > 2 * window + 100)
            func send(_ range: Range<Int>) async throws {  // in requests under the 16 MiB limit
                for start in stride(from: range.lowerBound, to: range.upperBound, by: 300) {
                    try await p.uploader.uploadChunks(named: Array(p.chunks[start..<min(range.upperBound, start + 300)]))
                }
            }
            try await send(0..<window)
            #expect(await eventually { await b.engine.status().downloads.bytesDone > 0 })
            try b.write("Documents/note.txt", "written while the stream runs")
            try await send(window..<2 * window)
            // The note reaches the server while the big file is still incomplete, well before the
            // stream would give up waiting (10 s) for chunks that are not coming yet. Counted from
            // when B has the second window (the step aside comes at a window's end): under a full
            // CI run the window itself once took longer than the whole bound.
            let (uploader, container) = (p.uploader, p.container)
            @Sendable func noteIsUp() async -> Bool {
                let items = (try? await uploader.changes(container, after: 0).items) ?? []
                return items.contains { $0.path.string == "Documents/note.txt" && $0.current?.uploaded == true }
            }
            let twoWindows = Int64(p.chunks.prefix(2 * window).reduce(0) { $0 + $1.1.count })
            let secondWindow = await eventually(timeout: .seconds(60)) {
                if await b.engine.status().downloads.bytesDone >= twoWindows { return true }
                return await noteIsUp()
            }
            #expect(secondWindow)
            let noteUp = await eventually(timeout: .seconds(8)) { await noteIsUp() }
            #expect(noteUp)
            let pending = try await uploader.versions(container, item: p.id)
            #expect(pending.current?.uploaded == false)
            try await send(2 * window..<p.chunks.count)
            _ = try await uploader.complete(container, version: p.version)
            #expect(await eventually(timeout: .seconds(90)) { b.readBytes("Documents/long.bin") == p.bytes })
        }
    }
}
