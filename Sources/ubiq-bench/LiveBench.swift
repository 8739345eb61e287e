import ArgumentParser
import Foundation
import Logging
import UbiqClient
import UbiqCore
import UbiqEngine

/// Latency of the live surfaces between two devices on one loopback server: a file change to
/// the metadata query's "did update" on the same device and on another, and a key-value write
/// to the other device's change notification.
struct LiveBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "live", abstract: "Query update and key-value propagation latency.")

    @Option(help: "Runs of each measure.") var runs = 31
    @Option(help: "The query's batching interval in milliseconds.") var intervalMs = 100

    func run() async throws {
        let server = try await BenchServer.start(label: "livebench")
        let a = try await device("A", server: server), b = try await device("B", server: server)
        await a.start(); await b.start()
        try await Task.sleep(for: .milliseconds(500))

        // 1. File written in A → "did update" (added) on A's and on B's query.
        let seenA = Arrivals(), seenB = Arrivals()
        let def = MetadataQueryDefinition()
        let qa = LiveQuery(engine: a.engine, definition: def, interval: .milliseconds(intervalMs))
        let qb = LiveQuery(engine: b.engine, definition: def, interval: .milliseconds(intervalMs))
        await qa.start { n in if case .didUpdate(let d) = n { let now = ContinuousClock.now; Task { await seenA.note(d.added.map(\.name), at: now) } } }
        await qb.start { n in if case .didUpdate(let d) = n { let now = ContinuousClock.now; Task { await seenB.note(d.added.map(\.name), at: now) } } }
        var same: [Double] = [], other: [Double] = []
        let folder = a.engine.folder
        for i in 0..<runs {
            let name = "live-\(i).txt"
            try await Task.sleep(for: .milliseconds(intervalMs + 100))  // an isolated change, after the previous one's batches
            let start = ContinuousClock.now
            try Data("run \(i)\n".utf8).write(to: folder.appendingPathComponent("Documents/" + name))
            let ta = try await seenA.wait(for: name), tb = try await seenB.wait(for: name)
            same.append(seconds(ta - start) * 1000)
            other.append(seconds(tb - start) * 1000)
        }
        report("file written in A → query update on A", same)
        report("file written in A → query update on B", other)
        await qa.stop(); await qb.stop()

        // 2. Key-value write in A → change notification on B.
        let kvSeen = Arrivals()
        _ = await b.kv.addListener { c in let now = ContinuousClock.now; Task { await kvSeen.note(c.keys, at: now) } }
        var kv: [Double] = []
        for i in 0..<runs {
            let key = "bench.\(i)"
            let start = ContinuousClock.now
            try await a.kv.set(.int(Int64(i)), forKey: key)
            await a.kv.synchronize()
            let t = try await kvSeen.wait(for: key)
            kv.append(seconds(t - start) * 1000)
        }
        report("key-value set in A → change notification on B", kv)
        await a.stop(); await b.stop()
        await server.stop()
    }

    func report(_ label: String, _ xs: [Double]) {
        let s = xs.sorted()
        print(String(format: "%@: median %.1f ms, p95 %.1f ms (n=%d, batch interval %d ms)", label, median(s), s[Int(Double(s.count - 1) * 0.95)], s.count, intervalMs))
    }

    func device(_ name: String, server: BenchServer) async throws -> DeviceRuntime {
        let (home, config) = try await server.signIn(name, container: "bench.live")
        var logger = Logger(label: "engine.\(name)")
        logger.logLevel = .error
        return try DeviceRuntime(home: home, config: config, logger: logger)
    }
}

/// When each name was first reported.
actor Arrivals {
    var times: [String: ContinuousClock.Instant] = [:]
    func note(_ names: [String], at t: ContinuousClock.Instant) { for n in names where times[n] == nil { times[n] = t } }
    func wait(for name: String) async throws -> ContinuousClock.Instant {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let t = times[name] { return t }
            try await Task.sleep(for: .microseconds(200))
        }
        throw CleanExit.message("timed out waiting for \(name)")
    }
}
