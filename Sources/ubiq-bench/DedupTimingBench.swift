import ArgumentParser
import Foundation
import UbiqClient
import UbiqCore

/// How long an account waits for an upload of content another account already stored, against
/// new content (row 9 of the hostile-input issue: the difference told an account whether anyone
/// held a given file). Both kinds are interleaved, one chunk per request, single and batched.
struct DedupTimingBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dedup-timing",
                                                     abstract: "Upload latency of content another account has vs new content, ms (medians).")

    @Option(help: "Uploads of each kind.") var runs = 200
    @Option(help: "Chunk size in bytes.") var size = 64 << 10

    func run() async throws {
        let server = try await BenchServer.start(label: "dedup")
        let url = "http://127.0.0.1:\(server.port)"
        try await server.services.addUser(name: "other", password: "other-pw", quota: 1 << 40)
        let owner = try await UbiqAPIClient(baseURL: url).login(user: "other", password: "other-pw", deviceName: "owner").1
        let prober = try await UbiqAPIClient(baseURL: url).login(user: "bench", password: "bench-pw", deviceName: "prober").1
        let a = UbiqAPIClient(baseURL: url, token: owner.token), b = UbiqAPIClient(baseURL: url, token: prober.token)
        var rng = SplitMix(seed: 9)
        func chunk() -> [UInt8] { (0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        // The other account holds these.
        let held = (0..<runs * 2).map { _ in chunk() }
        for c in held { try await a.uploadChunk(ContentHash.of(c), c) }
        var times: [String: [Double]] = [:]
        for i in 0..<runs {
            for (kind, bytes) in [("held", held[i]), ("new", chunk())] {
                let t0 = ContinuousClock.now
                try await b.uploadChunk(ContentHash.of(bytes), bytes)
                times["single \(kind)", default: []].append(seconds(ContinuousClock.now - t0) * 1000)
            }
            for (kind, bytes) in [("held", held[runs + i]), ("new", chunk())] {
                let t0 = ContinuousClock.now
                try await b.uploadChunks(named: [(ContentHash.of(bytes), bytes)])
                times["batch \(kind)", default: []].append(seconds(ContinuousClock.now - t0) * 1000)
            }
        }
        for name in ["single held", "single new", "batch held", "batch new"] {
            print(String(format: "%@ median %6.2f ms", name.padding(toLength: 12, withPad: " ", startingAt: 0), median(times[name]!)))
        }
        await server.stop()
    }
}
