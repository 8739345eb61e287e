import Foundation
import UbiqCore
import UbiqStorage

/// `ubiq server migrate`: an embedded server (its data folder: `metadata.sqlite` and `chunks/`)
/// copied into PostgreSQL and an S3 bucket, which several servers can then share. The chunks go
/// first (stored and indexed in the bucket, each verified against its hash as it is read), then
/// the metadata in one transaction; a copy that stops half-way leaves the database without
/// accounts, and running it again carries on (chunks already in the bucket are not sent again).
public enum Migration {
    public struct Report: Sendable, Codable {
        /// Rows copied, by table, and the rows the database holds afterwards (they must agree).
        public var rows: [String: Int] = [:]
        public var rowsAfter: [String: Int] = [:]
        public var chunks = 0
        public var chunkBytes: Int64 = 0
        public var seconds: Double = 0
    }

    /// Copies the embedded server in `data` into `database` and `blobs` (the database must hold
    /// no account). Checks the copy: every table's rows counted on both sides, and every chunk
    /// the source stores found in the target's index.
    public static func run(data: URL, database: PostgreSQLLocation, blobs: BlobStoreLocation,
                           environment: [String: String] = ProcessInfo.processInfo.environment, keyFile: String? = nil,
                           progress: @Sendable (String) -> Void = { _ in }) async throws -> Report {
        let started = ContinuousClock.now
        guard case .s3 = blobs else { throw APIFailure(.invalidValue, "--blobs: migrate copies into an S3 bucket (s3://BUCKET?endpoint=…)") }
        let sqlite = data.appendingPathComponent("metadata.sqlite")
        guard FileManager.default.fileExists(atPath: sqlite.path) else { throw APIFailure(.notFound, "no embedded server in \(data.path) (no metadata.sqlite)") }
        let source = try SQLiteDatabase(path: sqlite.path)
        let target: PostgreSQLDatabase
        do { target = try await PostgreSQLDatabase.open(database) } catch let e as StorageError { throw APIFailure(e.code, "PostgreSQL \(database.redacted): \(e.message)") }
        defer { Task { await target.close() } }
        // The chunks are read and written sealed with the embedded server's key, which the
        // database then holds the servers to (see `ServerKeyCheck`).
        let (ring, _) = try await ServerServices.openKeys(ServerServices.keyFile(in: data, given: keyFile, environment: environment), database: target)
        let sourceChunks = SealedChunkStore(try FolderChunkStore(root: data.appendingPathComponent("chunks"), recentBytes: 0), ring: ring)
        let targetChunks = SealedChunkStore(try await blobs.open(data: data, environment: environment, shared: target), ring: ring)
        var report = Report()

        // 1. The chunks, a page at a time: read (verified) from the folder, stored in the bucket.
        progress("copying chunks …")
        try await sourceChunks.storedChunks(pageSize: 512) { page in
            var batch: [(ContentHash, [UInt8])] = []
            var bytes = 0
            func flush() async throws {
                guard !batch.isEmpty else { return }
                try await targetChunks.putMany(batch.map { ($0.0, $0.1[...]) }, hashesChecked: true)
                batch.removeAll(keepingCapacity: true)
                bytes = 0
            }
            let got = try await sourceChunks.getMany(page.map(\.hash), limit: 1 << 30, verify: true)
            for (chunk, content) in zip(page, got) {
                guard let content else { throw APIFailure(.storageFailure, "chunk \(chunk.hash) is listed in \(data.path) but cannot be read") }
                if bytes + content.count > 12 << 20 { try await flush() }
                batch.append((chunk.hash, content))
                bytes += content.count
                report.chunks += 1
                report.chunkBytes += Int64(content.count)
            }
            try await flush()
        }
        // Every chunk the source stores is in the target's index.
        var missing = 0
        try await sourceChunks.storedChunks(pageSize: 1_000) { page in
            for c in page where try await !targetChunks.has(c.hash) { missing += 1 }
        }
        guard missing == 0 else { throw APIFailure(.storageFailure, "\(Counted.of(missing, "chunk")) did not reach the bucket; nothing else was copied") }

        // 2. The metadata, in one transaction.
        progress("copying \(Counted.of(report.chunks, "chunk")) done; copying accounts, devices, items, versions, settings …")
        do {
            report.rows = try await MetadataCopy.copy(from: source, to: target)
            report.rowsAfter = try await MetadataCopy.counts(target)
        } catch let e as StorageError { throw APIFailure(e.code, e.message) }
        let before = try await MetadataCopy.counts(source)
        guard before == report.rowsAfter else {
            throw APIFailure(.storageFailure, "the copy's rows differ from the source's: \(before) vs \(report.rowsAfter)")
        }
        let took = ContinuousClock.now - started
        report.seconds = Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
        return report
    }
}
