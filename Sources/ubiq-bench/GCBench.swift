import ArgumentParser
import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqServer

/// Garbage collection on the embedded store: files uploaded in batches (so packs mix files that
/// are kept with files that go), most of them deleted and the trash emptied, then one
/// collection — how much of the disk comes back, how fast, and what it does to an upload
/// running beside it.
struct GCBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "gc", abstract: "Garbage collection: bytes given back per second, and a concurrent upload's time.")

    @Option(help: "The server's --blobs (s3://BUCKET?endpoint=…; credentials from AWS_*); default: its data folder.") var blobs: String?
    @Option(help: "MiB of files deleted before the collection.") var garbageMiB = 1024
    @Option(help: "Size of each file, MiB.") var fileMiB = 4
    @Option(help: "Of every this many files one is kept (the rest deleted).") var keepEvery = 4
    @Option(help: "MiB uploaded alone, then again beside the collection.") var uploadMiB = 128

    func run() async throws {
        let server = try await BenchServer.start(label: "gc", blobs: blobs)
        let url = "http://127.0.0.1:\(server.port)"
        let c = UbiqAPIClient(baseURL: url, token: try await UbiqAPIClient(baseURL: url).login(user: "bench", password: "bench-pw", deviceName: "gc").1.token)
        let container = try ContainerID(validating: "iCloud.bench")
        var rng = SplitMix(seed: 25)
        let files = garbageMiB * keepEvery / max(1, keepEvery - 1) / fileMiB
        var doomed: [ItemID] = []
        var pending: [(ContentHash, [UInt8])] = []
        var pendingBytes = 0
        var commits: [CommitRequest] = []
        func flush() async throws {
            try await c.uploadChunks(named: pending)
            for r in commits { _ = try await c.commit(container, r) }
            pending = []; pendingBytes = 0; commits = []
        }
        for i in 0..<files {
            let bytes = randomBytes(fileMiB << 20, &rng)
            let m = Manifest.of(bytes)
            var offset = 0
            for ch in m.chunks {
                if pendingBytes + ch.size > 12 << 20 { try await flush() }
                pending.append((ch.hash, Array(bytes[offset..<offset + ch.size])))
                pendingBytes += ch.size
                offset += ch.size
            }
            let item = ItemID(uuid: UUID())
            commits.append(CommitRequest(itemID: item, versionID: VersionID(uuid: UUID()), path: try RelativePath(validating: "f\(i).bin"),
                                         kind: .file, base: nil, modified: Date(), manifest: m))
            if i % keepEvery != 0 { doomed.append(item) }
        }
        try await flush()
        for id in doomed { _ = try await c.delete(container, item: id) }
        _ = try await c.emptyTrash(container)

        let alone = try await upload(uploadMiB, c, &rng)
        let before = try await server.services.chunks.footprint()
        let gc = Task { try await server.services.collectGarbage() }
        let beside = try await upload(uploadMiB, c, &rng)
        let report = try await gc.value
        let after = try await server.services.chunks.footprint()
        print(String(format: "files: %d of %d MiB, %d deleted (%.0f MiB); store %.0f MiB → %.0f MiB (%.0f MiB given back; %d packs deleted, %d rewritten)",
                     files, fileMiB, doomed.count, Double(doomed.count * fileMiB), mib(report.storeBytesBefore), mib(report.storeBytesAfter),
                     mib(report.bytesFreed), report.packsDeleted, report.packsRewritten))
        print(String(format: "collection: %.2f s for %d chunks scanned, %d garbage: %.0f MiB/s given back", report.seconds, report.scannedChunks,
                     report.garbageChunks, mib(report.bytesFreed) / max(report.seconds, 1e-9)))
        print(String(format: "upload of %d MiB: %.2f s alone, %.2f s beside the collection", uploadMiB, alone, beside))
        _ = (before, after)
        await server.stop()
    }

    /// Uploads `mib` MiB of new content in batches; seconds taken.
    func upload(_ mib: Int, _ c: UbiqAPIClient, _ rng: inout SplitMix) async throws -> Double {
        let bytes = randomBytes(mib << 20, &rng)
        let m = Manifest.of(bytes)
        let t0 = ContinuousClock.now
        var batch: [(ContentHash, [UInt8])] = []
        var size = 0
        var offset = 0
        for ch in m.chunks {
            if size + ch.size > 12 << 20 { try await c.uploadChunks(named: batch); batch = []; size = 0 }
            batch.append((ch.hash, Array(bytes[offset..<offset + ch.size])))
            size += ch.size
            offset += ch.size
        }
        try await c.uploadChunks(named: batch)
        return seconds(ContinuousClock.now - t0)
    }

    func mib(_ b: Int64) -> Double { Double(b) / 1_048_576 }
}

/// `count` random bytes, eight at a time.
func randomBytes(_ count: Int, _ rng: inout SplitMix) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: count)
    out.withUnsafeMutableBytes { raw in
        var i = 0
        while i + 8 <= raw.count { raw.storeBytes(of: rng.next(), toByteOffset: i, as: UInt64.self); i += 8 }
        while i < raw.count { raw[i] = UInt8(truncatingIfNeeded: rng.next()); i += 1 }
    }
    return out
}
