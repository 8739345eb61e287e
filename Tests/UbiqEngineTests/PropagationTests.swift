import Foundation
import Testing
import UbiqClient
import UbiqCore
@testable import UbiqEngine
import UbiqProtocol
import UbiqTesting

@Suite("Sync between devices", .serialized)
struct PropagationTests {
    @Test(arguments: Backend.withEncrypted)
    func createModifyRenameMoveDeleteBothWays(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/notes.txt", "hello from A")
            #expect(await eventually { b.read("Documents/notes.txt") == "hello from A" }, "\(describeDiff(a, b))")
            try b.write("Documents/notes.txt", "edited on B")
            #expect(await eventually { a.read("Documents/notes.txt") == "edited on B" })
            // A rename keeps the item: the server sees one item whose path changed, no new content.
            let client = fleet.view(a)
            let before = try await client.changes(a.config.container, after: 0, limit: 1000).items.filter { $0.path.string == "Documents/notes.txt" }
            try FileManager.default.moveItem(at: a.url("Documents/notes.txt"), to: a.url("Documents/renamed.txt"))
            #expect(await eventually { b.exists("Documents/renamed.txt") && !b.exists("Documents/notes.txt") })
            let after = try await client.changes(a.config.container, after: 0, limit: 1000).items.filter { $0.path.string == "Documents/renamed.txt" }
            #expect(after.first?.id == before.first?.id && after.first?.current?.id == before.first?.current?.id)
            #expect(b.read("Documents/renamed.txt") == "edited on B")
            // Move into a new folder on B.
            try FileManager.default.createDirectory(at: b.url("Documents/Archive"), withIntermediateDirectories: true)
            try FileManager.default.moveItem(at: b.url("Documents/renamed.txt"), to: b.url("Documents/Archive/renamed.txt"))
            #expect(await eventually { a.read("Documents/Archive/renamed.txt") == "edited on B" && !a.exists("Documents/renamed.txt") })
            // Delete on A: gone on B, and in the server's trash.
            try FileManager.default.removeItem(at: a.url("Documents/Archive/renamed.txt"))
            #expect(await eventually { !b.exists("Documents/Archive/renamed.txt") })
            #expect(try await client.trash(a.config.container).items.contains { $0.path.string == "Documents/Archive/renamed.txt" })
            #expect(await converge(a, b), "\(describeDiff(a, b))")
        }
    }

    /// Daemons of a server that speaks HTTPS only: changes travel both ways, pushed over `wss://`
    /// (B learns of A's file from the push, well before the 30 s periodic pass).
    @Test func devicesSyncThroughAServerOverTLS() async throws {
        try await withFleet(tls: try TestCertificates.make()) { fleet in
            #expect(fleet.server.baseURL.hasPrefix("https://"))
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            let bothOnline = await eventually {
                let sa = await a.engine.status(), sb = await b.engine.status()
                return sa.state == .online && sb.state == .online
            }
            #expect(bothOnline)
            try a.write("Documents/over-tls.txt", "hello over TLS")
            #expect(await eventually(timeout: .seconds(20)) { b.read("Documents/over-tls.txt") == "hello over TLS" }, "\(describeDiff(a, b))")
            var rng = SeededRandom.forTest("tls.reply")
            try b.write("Documents/Reply/back.bin", bytes: rng.bytes(300_000))
            #expect(await converge(a, b, timeout: .seconds(20)), "\(describeDiff(a, b))")
        }
    }

    /// A client that chunked small files its own way still gets them across in a batch (their
    /// manifests name their chunks; the hash of each is its own chunk list's).
    @Test func smallFilesChunkedByAnotherClientStillArrive() async throws {
        try await withFleet { fleet in
            let (other, _) = try await fleet.server.device("alice", name: "another-client")
            let container = try ContainerID(validating: "TEAM.com.example.notes")
            var rng = SeededRandom.forTest("engine.small.foreign")
            let fine = Chunker(minSize: 512, avgSize: 1024, maxSize: 2048)
            var files: [String: [UInt8]] = [:]
            // Committed before B starts, so B gets them in one download batch.
            for i in 0..<8 {
                let bytes = i == 0 ? [] : rng.bytes(i == 1 ? 8 << 10 : Int.random(in: 1...(8 << 10), using: &rng))
                let m = i < 4 ? Manifest.of(bytes, chunker: fine) : Manifest.of(bytes)
                if i == 1 { #expect(m.chunks.count > 1) }
                try await other.uploadChunks(named: StreamingTests.named(bytes, m))
                let (_, v) = try await StreamingTests.commitNew(other, container, path: "Documents/small-\(i).bin", m)
                #expect(try await other.complete(container, version: v).current?.uploaded == true)
                files["Documents/small-\(i).bin"] = bytes
            }
            let b = try await fleet.device("B")
            #expect(await eventually { files.allSatisfy { b.readBytes($0.key) == $0.value } })
            #expect(await b.engine.batchesFailed == 0, "the batch asks for manifests instead of failing")
            // And the usual case, from a device using the standard chunker.
            let a = try await fleet.device("A")
            for i in 0..<8 { try a.write("Documents/from-a-\(i).txt", bytes: rng.bytes(Int.random(in: 0...(8 << 10), using: &rng))) }
            #expect(await converge(a, b), "\(describeDiff(a, b))")
        }
    }

    /// B writes the file the very moment its download lands (a tight read loop, no polling
    /// interval): the edit must be uploaded, never recorded as the downloaded content.
    @Test func anEditTheMomentADownloadLandsIsUploaded() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            for round in 0..<12 {
                // Alternate single-file downloads and batched ones (a batch needs four or more files).
                let batch = round % 2 == 1
                if batch { for i in 0..<4 { try a.write("Documents/batch/f\(i).txt", "round \(round) file \(i)") } }
                try a.write("Documents/race.txt", "round \(round) from A")
                let deadline = ContinuousClock.now + .seconds(30)
                while b.read("Documents/race.txt") != "round \(round) from A" && ContinuousClock.now < deadline { await Task.yield() }
                try b.write("Documents/race.txt", "round \(round) from B, longer")
                #expect(await eventually { a.read("Documents/race.txt") == "round \(round) from B, longer" }, "round \(round): \(describeDiff(a, b))")
                #expect(await converge(a, b), "round \(round): \(describeDiff(a, b))")
            }
        }
    }

    @Test func foldersEmptyFilesDeepTreesAndNosync() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/deep/er/and/deeper/file.txt", "deep")
            try a.write("Documents/empty.txt", "")
            try FileManager.default.createDirectory(at: a.url("Documents/empty-folder"), withIntermediateDirectories: true)
            try a.write("Documents/private.nosync/secret.txt", "stays here")
            try a.write("Documents/keep.txt.nosync", "stays too")
            try a.write("Top level.md", "outside Documents also syncs")
            #expect(await eventually {
                b.read("Documents/deep/er/and/deeper/file.txt") == "deep" && b.exists("Documents/empty.txt")
                    && b.exists("Documents/empty-folder") && b.read("Top level.md") != nil
            }, "\(describeDiff(a, b))")
            #expect(b.read("Documents/empty.txt") == "")
            #expect(!b.exists("Documents/private.nosync") && !b.exists("Documents/keep.txt.nosync"))
            // Excluded items never reach the server.
            let client = UbiqAPIClient(baseURL: fleet.server.baseURL, token: a.config.token)
            let paths = try await client.changes(a.config.container, after: 0).items.map(\.path.string)
            #expect(!paths.contains { $0.contains(".nosync") })
            // Deleting a folder deletes its contents everywhere.
            try FileManager.default.removeItem(at: a.url("Documents/deep"))
            #expect(await eventually { !b.exists("Documents/deep") }, "\(describeDiff(a, b))")
        }
    }

    @Test(arguments: Backend.withEncrypted)
    func folderRenamesAndMovesKeepEveryItem(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            for i in 0..<5 { try a.write("Documents/Project/sub/f\(i).txt", "file \(i)") }
            #expect(await eventually { b.read("Documents/Project/sub/f4.txt") == "file 4" })
            let client = fleet.view(a)
            let before = try await client.changes(a.config.container, after: 0, limit: 1000).items
            try FileManager.default.moveItem(at: b.url("Documents/Project"), to: b.url("Documents/Renamed"))
            try FileManager.default.createDirectory(at: b.url("Archive"), withIntermediateDirectories: true)
            try FileManager.default.moveItem(at: b.url("Documents/Renamed/sub"), to: b.url("Archive/sub"))
            #expect(await eventually { a.read("Archive/sub/f0.txt") == "file 0" && !a.exists("Documents/Project") && a.exists("Documents/Renamed") },
                    "\(describeDiff(a, b))")
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            // Same items, same versions: the folder moved, nothing was uploaded again.
            let after = try await client.changes(a.config.container, after: 0, limit: 1000).items
            for item in before where item.kind == .file {
                let now = after.first { $0.id == item.id }
                #expect(now?.current?.id == item.current?.id && now?.path.string.hasPrefix("Archive/sub/") == true)
            }
        }
    }

    @Test(arguments: Backend.withEncrypted)
    func aThousandSmallFiles(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            for i in 0..<1000 { try a.write("Documents/many/f\(i / 100)/file-\(i).txt", "content \(i)") }
            #expect(await eventually(timeout: .seconds(180)) { b.read("Documents/many/f9/file-999.txt") == "content 999" && b.snapshot().count >= 1012 })
            #expect(await converge(a, b, timeout: .seconds(60)), "\(describeDiff(a, b))")
        }
    }

    /// Files keep coming while B downloads (the server announces each wave mid-batch, and B
    /// adds their downloads to the batches in flight); an edit and a new file on B in the
    /// middle, and a file A rewrites while B fetches it, all end up the same on both sides.
    @Test func wavesOfFilesWhileDownloading() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            for wave in 0..<6 {
                for i in 0..<150 { try a.write("Documents/waves/w\(wave)/file-\(i).txt", "wave \(wave) file \(i)") }
                // The next wave goes out as soon as this one starts landing on B.
                #expect(await eventually(timeout: .seconds(60)) { b.exists("Documents/waves/w\(wave)/file-0.txt") || b.exists("Documents/waves/w\(wave)/file-149.txt") })
                if wave == 2 {
                    try b.write("Documents/waves/w0/file-7.txt", "edited on B while waves arrive")
                    try b.write("Documents/waves/from-b.txt", "made on B")
                    try a.write("Documents/waves/w2/file-3.txt", "rewritten on A")
                }
            }
            #expect(await eventually(timeout: .seconds(120)) { b.read("Documents/waves/w5/file-149.txt") == "wave 5 file 149" })
            #expect(await converge(a, b, timeout: .seconds(60)), "\(describeDiff(a, b))")
            #expect(a.read("Documents/waves/w0/file-7.txt") == "edited on B while waves arrive")
            #expect(b.read("Documents/waves/w2/file-3.txt") == "rewritten on A")
            #expect(a.read("Documents/waves/from-b.txt") == "made on B")
        }
    }

    @Test func twoAccountsNeverSeeEachOthersFiles() async throws {
        try await withFleet { fleet in
            let alice = try await fleet.device("alice-laptop"), bob = try await fleet.device("bob-laptop", user: "bob")
            let alice2 = try await fleet.device("alice-phone")
            try alice.write("Documents/alice.txt", "alice only")
            try bob.write("Documents/bob.txt", "bob only")
            #expect(await eventually { alice2.read("Documents/alice.txt") == "alice only" })
            #expect(await eventually { await bob.engine.isIdle() })
            #expect(!bob.exists("Documents/alice.txt") && !alice.exists("Documents/bob.txt") && !alice2.exists("Documents/bob.txt"))
        }
    }
}
