import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqServer

/// Small-file commits per second over loopback against a real embedded server.
struct CommitBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "commits", abstract: "Commits per second for small files over loopback.")

    @Option(help: "Number of files.") var files = 2000
    @Option(help: "Concurrent clients.") var concurrency = 8
    @Option(help: "Commit batches of 500 new files (their chunks sent first, not timed).") var batches = 40
    @Flag(help: "Leave the batches' folders out (files in folders never committed).") var withoutFolders = false
    @Option(help: "Metadata in PostgreSQL: a postgres:// URL whose role may create databases (the bench makes one and drops it); default: SQLite.") var database: String?
    @Flag(help: "Keep chunks unsealed on the server (a side-by-side figure of sealing's cost; the product always seals).") var unsealed = false

    func run() async throws {
        let server = try await BenchServer.start(label: "commitbench", database: database, unsealed: unsealed)
        let port = server.port
        let (client, _) = try await UbiqAPIClient(baseURL: "http://127.0.0.1:\(port)").login(user: "bench", password: "bench-pw", deviceName: "bench")
        let container = try ContainerID(validating: "bench.container")

        let clock = ContinuousClock()
        let per = files / concurrency
        let elapsed = try await clock.measure {
            try await withThrowingTaskGroup(of: Void.self) { g in
                for w in 0..<concurrency {
                    g.addTask {
                        for i in 0..<per {
                            let bytes = Array("file \(w)-\(i) contents".utf8)
                            let m = Manifest.of(bytes)
                            for c in m.chunks { try await client.uploadChunk(c.hash, bytes) }
                            let r = try await client.commit(container, CommitRequest(
                                itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()),
                                path: try RelativePath(validating: "Documents/w\(w)/f\(i).txt"), kind: .file, base: nil,
                                modified: Date(), manifest: m))
                            precondition(r.version?.uploaded == true)
                        }
                    }
                }
                try await g.waitForAll()
            }
        }
        let n = per * concurrency
        print(String(format: "%d small files (chunk upload + commit each), %d clients: %.2f s, %.0f files/s, server RSS %.0f MiB",
                     n, concurrency, seconds(elapsed), Double(n) / seconds(elapsed), rssMiB()))

        // Commit batches as an engine sends them: 5 new folders and 500 new files in them, the
        // chunks already up.
        var batchTime: Duration = .zero
        for b in 0..<batches {
            var requests: [CommitRequest] = []
            var chunks: [[UInt8]] = []
            for folder in withoutFolders ? [] : (b == 0 ? ["Batches"] : []) + ["Batches/b\(b)"] + (0..<5).map({ "Batches/b\(b)/d\($0)" }) {
                requests.append(CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: try RelativePath(validating: folder),
                                              kind: .folder, base: nil, modified: Date(), manifest: nil))
            }
            for i in 0..<500 {
                let bytes = Array("batch \(b) file \(i) contents".utf8)
                chunks.append(bytes)
                requests.append(CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()),
                                              path: try RelativePath(validating: "Batches/b\(b)/d\(i / 100)/f\(i).txt"), kind: .file, base: nil,
                                              modified: Date(), manifest: Manifest.of(bytes)))
            }
            try await client.uploadChunks(chunks)
            let start = clock.now
            let results = try await client.commitMany(container, requests)
            batchTime += clock.now - start
            precondition(results.allSatisfy { $0.response?.outcome == .created && ($0.response?.version?.uploaded ?? true) })
        }
        if batches > 0 {
            print(String(format: "%d commit batches of 500 new files\(withoutFolders ? " without their folders" : "") (request to answer): %.1f ms a batch, %.1f µs a file", batches,
                         seconds(batchTime) * 1000 / Double(batches), seconds(batchTime) * 1e6 / Double(batches * 500)))
        }
        await server.stop()
    }
}
