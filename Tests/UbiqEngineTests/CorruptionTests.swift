import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqTesting

/// Downloads verify every chunk before writing it (the server does not hash what it reads
/// back); a corrupt chunk on the server must never reach a device's folder.
@Suite("Corrupt server data", .serialized)
struct CorruptionTests {
    static let content: [UInt8] = {
        var rng = SeededRandom.forTest("engine.corrupt")
        return rng.bytes(3 << 20)
    }()

    /// Flips the middle byte of each file in `folder` named `*suffix`; returns how many.
    static func flipMiddleByte(ofFilesIn folder: URL, suffix: String) throws -> Int {
        var flipped = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(suffix) {
            let h = try FileHandle(forUpdating: folder.appendingPathComponent(name))
            let size = try h.seekToEnd()
            try h.seek(toOffset: size / 2)
            let byte = try h.read(upToCount: 1)?.first ?? 0
            try h.seek(toOffset: size / 2)
            try h.write(contentsOf: [byte ^ 0x5A])
            try h.close()
            flipped += 1
        }
        return flipped
    }

    @Test func aChunkCorruptOnTheServerIsNamedAndNeverPlaced() async throws {
        var server = try await TestServer.start()
        let port = server.port
        try await server.user("alice")
        let a = try await TestDevice.make(server, user: "alice", name: "A")
        defer { a.remove() }
        let big = Self.content  // above the small-file batch limit: the single-file path
        try a.write("Documents/big.bin", bytes: big)
        let client = UbiqAPIClient(baseURL: server.baseURL, token: a.config.token)
        let want = Manifest.of(big).hash, container = a.config.container
        let uploaded = await eventually {
            let items = (try? await client.changes(container, after: 0).items) ?? []
            return items.contains { $0.path.string == "Documents/big.bin" && $0.current?.uploaded == true && $0.current?.hash == want }
        }
        #expect(uploaded)
        await a.stop()
        // One byte flipped in the middle of every pack the server wrote, while it is stopped (a
        // running server would serve chunks it stored moments ago from memory, not from disk).
        await server.stop(keepData: true)
        let flipped = try Self.flipMiddleByte(ofFilesIn: server.directory.url.appendingPathComponent("chunks/packs"), suffix: ".pack")
        #expect(flipped > 0)
        server = try await TestServer.start(directory: server.directory, port: port)
        // The server finds the damage (its seal does not open), names the chunk and serves nothing;
        // B writes nothing to its folder.
        let b = try await TestDevice.make(server, user: "alice", name: "B")
        defer { b.remove() }
        // Asked for, it is reported with the corrupt chunk named.
        nonisolated(unsafe) var why = ""
        let named = await eventually {
            let r = await b.engine.download([try! RelativePath(validating: "Documents/big.bin")])
            why = r.first?.error ?? ""
            // The server's seal no longer opens: it names the chunk and serves nothing.
            return why.contains("is damaged on the server") && why.contains("chunk_damaged")
        }
        #expect(named, "\(why)")
        #expect(!b.exists("Documents/big.bin"))
        let listed = await b.engine.listing().first { $0.path.string == "Documents/big.bin" }
        #expect(listed?.status == .notDownloaded)
        await b.stop()
        await server.stop()
    }
}
