import ArgumentParser
import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

/// Push latency across two servers on one PostgreSQL database and bucket: a device listens on
/// server one while another device commits small files through server two; the time from the
/// commit's request to the notification's arrival.
struct FleetPushBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "push", abstract: "Push latency across two servers (PostgreSQL LISTEN/NOTIFY).")

    @Option(help: "A postgres:// URL whose role may create databases (the bench makes one and drops it).") var database: String
    @Option(help: "The servers' --blobs (s3://BUCKET?endpoint=…; credentials from AWS_*).") var blobs: String
    @Option(help: "Commits timed.") var samples = 50

    func run() async throws {
        let one = try await BenchServer.start(label: "push-1", blobs: blobs, database: database)
        let two = try await BenchServer.start(label: "push-2", blobs: blobs, shared: one.made)
        let (writer, _) = try await UbiqAPIClient(baseURL: "http://127.0.0.1:\(two.port)").login(user: "bench", password: "bench-pw", deviceName: "writer")
        let (listener, _) = try await UbiqAPIClient(baseURL: "http://127.0.0.1:\(one.port)").login(user: "bench", password: "bench-pw", deviceName: "listener")
        let container = try ContainerID(validating: "bench.push")
        let (stream, inbox) = AsyncStream<PushMessage>.makeStream()
        let listening = Task { try await listener.listen { inbox.yield($0) } }
        var iterator = stream.makeAsyncIterator()
        guard await iterator.next()?.kind == .hello else { throw CleanExit.message("no hello on the push channel") }
        var latencies: [Double] = []
        for i in 0..<samples + 5 {
            let bytes = Array("push \(i)".utf8)
            let m = Manifest.of(bytes)
            try await writer.uploadChunks([bytes])
            let start = ContinuousClock.now
            let r = try await writer.commit(container, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()),
                                                                     path: try RelativePath(validating: "p\(i).txt"), kind: .file, base: nil, modified: Date(), manifest: m))
            while let msg = await iterator.next() {
                if msg.kind == .changes && msg.cursor >= r.item.changeSeq { break }
            }
            if i >= 5 { latencies.append(seconds(ContinuousClock.now - start) * 1000) }  // the first few warm up
        }
        listening.cancel()
        latencies.sort()
        func pct(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
        print(String(format: "commit through server two → push on server one, %d samples: median %.1f ms, p90 %.1f ms, max %.1f ms (the commit's own time included)",
                     latencies.count, pct(0.5), pct(0.9), latencies.last ?? 0))
        await two.stop()
        await one.stop()
    }
}
