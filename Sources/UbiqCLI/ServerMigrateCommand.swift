import ArgumentParser
import Foundation
import UbiqCore
import UbiqEngine
import UbiqServer
import UbiqStorage

/// `ubiq server migrate --data DIR --database URL --blobs URL [--json]`
struct ServerMigrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Copy an embedded server into PostgreSQL and an S3 bucket.",
        discussion: """
            Copies accounts, devices and their sign-ins, items, versions, the trash, settings and \
            chunks from the data folder (metadata.sqlite, chunks/) into an empty PostgreSQL database \
            and a bucket, then checks the copy. The embedded server must be stopped. Afterwards start \
            `ubiq server --database … --blobs …` where the old one listened: devices keep working \
            without signing in again. The data folder is left as it was.
            """)

    @OptionGroup var data: DataOption
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() async throws {
        let env = ProcessInfo.processInfo.environment
        guard let database = data.database, let blobs = data.blobs else {
            throw CLIError(.invalidValue, "migrate needs --database postgres://… and --blobs s3://… (where to copy to)")
        }
        let dir = data.directory()
        let pg: PostgreSQLLocation
        let bucket: BlobStoreLocation
        do {
            guard case .postgres(let p) = try MetadataLocation.parse(database, environment: env) else { throw CoreError(.invalidValue, "--database: not a postgres:// URL") }
            pg = p
            bucket = try BlobStoreLocation.parse(blobs, environment: env)
        } catch let e as CoreError { throw CLIError(e.code, e.message) }
        DataOption.warnOfPassword(in: database)
        // The embedded server must not run meanwhile (nor start until the copy is done).
        let lock: HomeLock?
        do { lock = try HomeLock.acquire(file: dir.appendingPathComponent("server.lock")) } catch let e as EngineError { throw CLIError(.storageFailure, e.message) }
        guard let lock else { throw CLIError(.invalidRequest, "a ubiq server is using \(dir.path); stop it before migrating") }
        defer { withExtendedLifetime(lock) {} }
        let quiet = json
        let report = try await Migration.run(data: dir, database: pg, blobs: bucket, environment: env, keyFile: data.keyFile) { line in
            if !quiet { FileHandle.standardError.write(Data((line + "\n").utf8)) }
        }
        if json { return try printJSON(report) }
        let rows = report.rows.values.reduce(0, +)
        print("copied \(Counted.of(report.rows["accounts"] ?? 0, "account")), \(Counted.of(report.rows["items"] ?? 0, "item")), \(Counted.of(report.rows["versions"] ?? 0, "version")), "
              + "\(Counted.of(rows, "row")) in all, and \(Counted.of(report.chunks, "chunk")) (\(ByteSize.format(report.chunkBytes))) in \(String(format: "%.1f", report.seconds)) s; "
              + "the copy was checked (rows counted on both sides, every chunk found in the bucket)")
        print("now run: ubiq server --database '\(pg.redacted)' --blobs '\(blobs)' --data \(dir.path)")
    }
}
