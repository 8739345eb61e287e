import ArgumentParser
import Foundation
import Logging
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqProtocol
import UbiqServer

/// `ubiq server gc [--dry-run] [--json] [--data DIR]`
struct ServerGC: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc",
        abstract: "Give back the disk space of chunks nothing uses any more.",
        discussion: """
            Chunks of pruned history, of purged or emptied trash, of deleted accounts, and uploads \
            never committed within a day are removed; packs left mostly empty are rewritten. The \
            server also does this every 6 hours, and soon after a trash is emptied. While a server \
            uses the data folder, it does the work (this command asks it); otherwise this command does.
            """)

    @OptionGroup var data: DataOption
    @Flag(name: .long, help: "Only say what would be removed.") var dryRun = false
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() async throws {
        let dir = data.directory()
        let report: GarbageReport
        let lock: HomeLock?
        do { lock = try HomeLock.acquire(file: dir.appendingPathComponent("server.lock")) } catch let e as EngineError { throw CLIError(.storageFailure, e.message) }
        if let lock {
            // No server uses the folder, and none can start until this is done.
            defer { withExtendedLifetime(lock) {} }
            report = try await data.services().collectGarbage(dryRun: dryRun)
        } else {
            report = try await AdminAccess.read(in: dir).client().collectGarbage(dryRun: dryRun)
        }
        if json { return try printJSON(report) }
        print(Self.describe(report))
    }

    static func describe(_ r: GarbageReport) -> String {
        var lines: [String] = []
        let verb = r.dryRun ? "would be" : ""
        lines.append("\(r.garbageChunks) of \(r.scannedChunks) stored \(r.scannedChunks == 1 ? "chunk" : "chunks") unused (\(ByteSize.format(r.garbageBytes)))\(r.dryRun ? ", would be removed" : ", removed")")
        if r.releasedUploads > 0 {
            lines.append("\(Counted.of(r.releasedUploads, "upload")) never committed \(verb.isEmpty ? "released" : "would be released") (\(ByteSize.format(r.releasedBytes)))")
        }
        if !r.dryRun {
            lines.append("packs: \(r.packsDeleted) deleted, \(r.packsRewritten) rewritten; \(ByteSize.format(r.bytesFreed)) given back "
                         + "(store \(ByteSize.format(r.storeBytesBefore)) → \(ByteSize.format(r.storeBytesAfter))) in \(String(format: "%.1f", r.seconds)) s")
        }
        return lines.joined(separator: "\n")
    }
}

/// How `ubiq server gc` reaches a running server: its address and administrator token, in
/// `<data>/admin.json` (written by the server once it listens; the data folder is its user's
/// alone).
struct AdminAccess: Codable {
    var url: String
    var token: String
    /// The server's certificate file when it serves HTTPS.
    var certificate: String?

    static func url(scheme: String, host: String, port: Int) -> String {
        // A server on every address is asked on loopback.
        let h = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "::1" : host
        return "\(scheme)://\(h.contains(":") ? "[\(h)]" : h):\(port)"
    }

    static func file(_ dir: URL) -> URL { dir.appendingPathComponent("admin.json") }

    func write(in dir: URL, _ logger: Logger) {
        do {
            let tmp = dir.appendingPathComponent("admin.json.tmp")
            try JSONEncoder().encode(self).write(to: tmp)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: tmp.path)
            guard rename(tmp.path, Self.file(dir).path) == 0 else { throw CLIError(.storageFailure, String(cString: strerror(errno))) }
        } catch {
            logger.warning("cannot write \(Self.file(dir).path) (ubiq server gc cannot reach this server): \(error)")
        }
    }

    static func read(in dir: URL) throws -> AdminAccess {
        guard let data = try? Data(contentsOf: file(dir)), data.count < 64 << 10, let access = try? JSONDecoder().decode(AdminAccess.self, from: data) else {
            throw CLIError(.serverUnreachable, "a server is using \(dir.path) but left no \(file(dir).lastPathComponent) to reach it; restart it, or stop it and run this again")
        }
        return access
    }

    func client() throws -> UbiqAPIClient {
        var trusted: String?
        if let certificate {
            do { trusted = try String(contentsOfFile: certificate, encoding: .utf8) } catch {
                throw CLIError(.storageFailure, "cannot read the server's certificate \(certificate): \(error.localizedDescription)")
            }
        }
        return UbiqAPIClient(baseURL: url, token: token, trusting: trusted, timeout: .hours(2))
    }
}
