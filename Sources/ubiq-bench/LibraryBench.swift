import ArgumentParser
import Foundation
import Logging
import UbiqCore
import UbiqEngine
import Ubiquity

/// What going through the daemon's socket costs a program: the same changes observed, in the
/// same run, by an in-process observer on the engine and by a program using `import Ubiquity`
/// against the daemon (its socket served by the daemon's own code).
struct LibraryBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "library", abstract: "Query and settings latency through the library vs in-process.")

    @Option(help: "Runs of each measure.") var runs = 31
    @Option(help: "The query's batching interval in milliseconds.") var intervalMs = 100

    struct Daemon {
        let devices: DeviceRuntimes
        let runtime: DeviceRuntime
        let socket: DaemonSocket
        let library: Ubiquity
    }

    func daemon(_ name: String, server: BenchServer) async throws -> Daemon {
        let (home, config) = try await server.signIn(name, container: "bench.library")
        var logger = Logger(label: "engine.\(name)")
        logger.logLevel = .error
        let devices = try DeviceRuntimes(home: home, config: config, logger: logger)
        let socket = DaemonSocket(path: home.socketPath) { req, container, emit in await devices.handle(req, container: container, emit: emit) }
        try await socket.start()
        await devices.start()
        return Daemon(devices: devices, runtime: try await devices.runtime(nil), socket: socket,
                      library: Ubiquity(home: server.dir.appendingPathComponent("home-\(name)")))
    }

    func run() async throws {
        let server = try await BenchServer.start(label: "librarybench")
        let a = try await daemon("A", server: server), b = try await daemon("B", server: server)
        try await Task.sleep(for: .milliseconds(500))

        // 1. A file written in A → "did update" on B: the engine's query in B's process, and a
        //    program's query through B's socket.
        let inProcess = Arrivals(), library = Arrivals()
        let query = LiveQuery(engine: b.runtime.engine, definition: MetadataQueryDefinition(), interval: .milliseconds(intervalMs))
        await query.start { n in if case .didUpdate(let d) = n { let now = ContinuousClock.now; Task { await inProcess.note(d.added.map(\.name), at: now) } } }
        let program = MetadataQuery(interval: .milliseconds(intervalMs), ubiquity: b.library)
        let watching = Task {
            for try await n in program.notifications() {
                if case .didUpdate(let added, _, _) = n { let now = ContinuousClock.now; await library.note(added.map(\.name), at: now) }
            }
        }
        var direct: [Double] = [], socket: [Double] = []
        for i in 0..<runs {
            let name = "lib-\(i).txt"
            try await Task.sleep(for: .milliseconds(intervalMs + 100))
            let start = ContinuousClock.now
            try Data("run \(i)\n".utf8).write(to: a.runtime.engine.folder.appendingPathComponent("Documents/" + name))
            let t1 = try await inProcess.wait(for: name), t2 = try await library.wait(for: name)
            direct.append(seconds(t1 - start) * 1000)
            socket.append(seconds(t2 - start) * 1000)
        }
        report("file in A → query update on B, in B's process", direct)
        report("file in A → query update on B, through the library", socket)
        await query.stop()
        watching.cancel()

        // 2. A setting: written in-process in A and seen by B's in-process listener; then
        //    written by a program on A and seen by a program's change stream on B.
        let kvDirect = Arrivals(), kvLibrary = Arrivals()
        _ = await b.runtime.kv.addListener { c in let now = ContinuousClock.now; Task { await kvDirect.note(c.keys, at: now) } }
        var kvIn: [Double] = [], kvLib: [Double] = []
        for i in 0..<runs {
            let key = "direct.\(i)"
            let start = ContinuousClock.now
            try await a.runtime.kv.set(.int(Int64(i)), forKey: key)
            await a.runtime.kv.synchronize()
            kvIn.append(seconds(try await kvDirect.wait(for: key) - start) * 1000)
        }
        let (ready, signal) = AsyncStream<Void>.makeStream()
        let listening = Task {
            for try await c in KeyValueStore(ubiquity: b.library).changes(ready: { signal.yield() }) {
                let now = ContinuousClock.now
                await kvLibrary.note(c.keys, at: now)
            }
        }
        for await _ in ready { break }
        let writer = KeyValueStore(ubiquity: a.library)
        for i in 0..<runs {
            let key = "library.\(i)"
            let start = ContinuousClock.now
            try await writer.set(.int(Int64(i)), forKey: key)
            kvLib.append(seconds(try await kvLibrary.wait(for: key) - start) * 1000)
        }
        report("setting in A → change on B, in-process", kvIn)
        report("setting in A → change on B, program to program through the library", kvLib)
        listening.cancel()
        for d in [a, b] { d.socket.stop(); await d.devices.stop() }
        await server.stop()
    }

    func report(_ label: String, _ xs: [Double]) {
        let s = xs.sorted()
        print(String(format: "%@: median %.1f ms, p95 %.1f ms (n=%d, batch interval %d ms)", label, median(s), s[Int(Double(s.count - 1) * 0.95)], s.count, intervalMs))
    }
}
