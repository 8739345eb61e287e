import ArgumentParser
import Foundation
import Logging
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine

/// A count handed over from a notification.
final class Gathered: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func set(_ v: Int) { lock.withLock { n = v } }
    var count: Int { lock.withLock { n } }
}

/// Engine memory with many tracked files: syncs N small files from one device, then opens a
/// fresh engine on that home in a child process (nothing else in it) and measures its RSS after
/// a full scan and plan over all N items.
struct EngineMemoryBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "engine-memory", abstract: "Engine RSS with N tracked files.")

    @Option(help: "Number of files.") var files = 100_000
    @Option(help: "(internal) measure an existing home in this process.") var measureHome: String?
    @Flag(help: "Keep the device's home and say where (to measure it again, e.g. under heaptrack, with --measure-home).") var keepHome = false

    func run() async throws {
        if let measureHome { return try await measure(measureHome) }
        let server = try await BenchServer.start(label: "memorybench")
        let (home, config) = try await server.signIn("A", container: "bench.memory")
        let folder = home.containerFolder(config.container)
        for i in 0..<files {
            let dir = folder.appendingPathComponent("Documents/d\(i / 1000)")
            if i % 1000 == 0 { try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true) }
            try Data("file \(i)\n".utf8).write(to: dir.appendingPathComponent("f\(i).txt"))
        }
        let engine = try SyncEngine(home: home, config: config, logger: server.logger)
        let start = ContinuousClock.now
        await engine.start()
        while true {
            try await Task.sleep(for: .seconds(1))
            let s = await engine.status()
            let listed = await engine.listing().count
            if s.idle && listed >= files + files / 1000 + 1 { break }
        }
        let took = seconds(ContinuousClock.now - start)
        await engine.stop()
        print(String(format: "synced %d files (+%d folders) from one device in %.1f s (%.0f files/s); server+engine RSS %.0f MiB",
                     files, files / 1000, took, Double(files) / took, rssMiB()))
        await server.stop(keepingData: true)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        p.arguments = ["engine-memory", "--measure-home", home.configDirectory.deletingLastPathComponent().path]
        try p.run()
        p.waitUntilExit()
        if keepHome {
            print("home kept: \(home.configDirectory.deletingLastPathComponent().path) (server data in \(server.dir.path))")
        } else {
            try? FileManager.default.removeItem(at: server.dir)
        }
    }

    func measure(_ path: String) async throws {
        let home = DeviceHome.rooted(at: URL(fileURLWithPath: path))
        guard let config = try DeviceConfig.load(home) else { throw ValidationError("no config in \(path)") }
        let before = rssMiB()
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        let engine = try SyncEngine(home: home, config: config, logger: logger)
        let clock = ContinuousClock()
        var status: EngineStatus?
        let t = await clock.measure { status = await engine.peek() }
        let items = await engine.listing().count
        print(String(format: "fresh engine on that home: load + full scan + plan of %d items in %.2f s (server down: %@); engine RSS %.0f MiB (process %.0f MiB before opening it)",
                     items, seconds(t), status?.state.rawValue ?? "?", rssMiB(), before))
        // A daemon gives the allocator's free memory back every 30 s (`ProcessMemory`): what it holds idle.
        ProcessMemory.trim()
        print(String(format: "after the allocator gave back what it held free (as a daemon does every 30 s): engine RSS %.0f MiB", rssMiB()))
        // What the engine holds now, for a heap profiler: what is still allocated at exit.
        if ProcessInfo.processInfo.environment["UBIQ_BENCH_EXIT_AFTER_LOAD"] == "1" { Foundation.exit(0) }
        // A live query over all of them: gathering time and the memory it adds.
        for text in ["TRUEPREDICATE", "name LIKE '*7*.txt' AND size < 1KB"] {
            let rssBefore = rssMiB()
            let q = LiveQuery(engine: engine, definition: MetadataQueryDefinition(predicate: try QueryPredicate.parse(text)))
            let gathered = Gathered()
            let g = await clock.measure {
                await q.start { n in if case .didFinishGathering(let items) = n { gathered.set(items.count) } }
            }
            print(String(format: "query gathering over %d items (%@): %.0f ms, %d results, RSS +%.0f MiB", items, text, seconds(g) * 1000,
                         gathered.count, rssMiB() - rssBefore))
            await q.stop()
        }
    }
}
