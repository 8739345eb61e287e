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

    func run() async throws {
        let server = try await BenchServer.start(label: "commitbench")
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
        await server.stop()
    }
}
