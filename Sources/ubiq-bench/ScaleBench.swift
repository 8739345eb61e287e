import ArgumentParser
import Foundation
import UbiqCore
import UbiqEngine

/// One change in a big account (#42): two devices in sync over N small files in N/100 folders,
/// then one file edited (and one created) in A, timed until B holds it. Also the first sync's
/// rate (A sends everything, B fetches everything) and the process's memory with both engines.
struct ScaleBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "scale", abstract: "One change → the other device, over N files in sync (#42).")

    @Option(help: "Number of files (in files/100 folders).") var files = 200_000
    @Option(help: "Edits timed (each of another file).") var edits = 7

    func run() async throws {
        let server = try await BenchServer.start(label: "scalebench")
        let a = try await server.device("A", container: "bench.scale")
        let b = try await server.device("B", container: "bench.scale")
        let folders = max(1, files / 100)
        func rel(_ i: Int) -> String { "Documents/d\(i % folders)/f\(i).txt" }
        for d in 0..<folders {
            try FileManager.default.createDirectory(at: a.folder.appendingPathComponent("Documents/d\(d)"), withIntermediateDirectories: true)
        }
        for i in 0..<files { try Data("file \(i)\n".utf8).write(to: a.folder.appendingPathComponent(rel(i))) }
        let items = files + folders + 1

        var start = ContinuousClock.now
        await a.engine.start()
        try await Self.waitUntil(a.engine, lists: items)
        let up = seconds(ContinuousClock.now - start)
        start = ContinuousClock.now
        await b.engine.start()
        try await Self.waitUntil(b.engine, lists: items, holding: b.folder.appendingPathComponent(rel(files - 1)))
        let down = seconds(ContinuousClock.now - start)
        print(String(format: "%d files in %d folders: A sent them in %.1f s (%.0f files/s), B fetched them in %.1f s (%.0f files/s); process RSS (server + 2 engines) %.0f MiB",
                     files, folders, up, Double(files) / up, down, Double(files) / down, rssMiB()))
        fflush(nil)
        try await Task.sleep(for: .seconds(2))

        var edited: [Double] = [], created: [Double] = []
        for e in 0..<edits {
            let i = (e * 7919) % files
            let text = "edited \(e) of \(i)\n"
            start = ContinuousClock.now
            try Data(text.utf8).write(to: a.folder.appendingPathComponent(rel(i)))
            try await Self.waitFor(b.folder.appendingPathComponent(rel(i)), text)
            edited.append(seconds(ContinuousClock.now - start) * 1000)
            try await Task.sleep(for: .milliseconds(500))
            let name = "Documents/d\((i + 1) % folders)/new-\(e).txt"
            start = ContinuousClock.now
            try Data("new \(e)\n".utf8).write(to: a.folder.appendingPathComponent(name))
            try await Self.waitFor(b.folder.appendingPathComponent(name), "new \(e)\n")
            created.append(seconds(ContinuousClock.now - start) * 1000)
            try await Task.sleep(for: .milliseconds(500))
        }
        print(String(format: "one file edited in A → in B: median %.0f ms (min %.0f, max %.0f); one file created: median %.0f ms (min %.0f, max %.0f) (n=%d, over %d items)",
                     median(edited), edited.min() ?? 0, edited.max() ?? 0, median(created), created.min() ?? 0, created.max() ?? 0, edits, items))
        print(String(format: "process RSS after: %.0f MiB", rssMiB()))
        await a.engine.stop(); await b.engine.stop()
        await server.stop()
    }

    /// Waits (polling every 200 ms, up to an hour) until the engine lists `items` and is idle,
    /// and `holding` (when given) exists.
    static func waitUntil(_ engine: SyncEngine, lists items: Int, holding: URL? = nil) async throws {
        let deadline = ContinuousClock.now + .seconds(3600)
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            if let holding, !FileManager.default.fileExists(atPath: holding.path) { continue }
            let s = await engine.status()
            if s.idle, await engine.listing().count >= items { return }
        }
        throw CleanExit.message("not in sync after an hour")
    }

    /// Waits (polling every 0.5 ms, up to 60 s) until `url` holds `text`.
    static func waitFor(_ url: URL, _ text: String) async throws {
        let want = Data(text.utf8), deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if FileManager.default.contents(atPath: url.path) == want { return }
            try await Task.sleep(for: .microseconds(500))
        }
        throw CleanExit.message("\(url.path) did not arrive in 60 s")
    }
}
