import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqServer
import UbiqHarness

/// End-to-end sync between two devices (A and B, each its own engine and home) through a real
/// server on loopback, with a byte-counting proxy in front of the server for each device.
struct SyncBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sync", abstract: "Latency and wire bytes between two devices.")

    @Option(help: "The server's --blobs (s3://BUCKET?endpoint=…; credentials from AWS_*); default: its data folder.") var blobs: String?
    @Option(help: "Runs of the 1 MiB latency measure.") var runs = 21
    @Option(help: "Runs of each 64 MiB edit measure.") var editRuns = 5
    @Option(help: "Runs of each moved-in / atomic-save measure.") var placedRuns = 7
    @Option(help: "MiB of the big moved-in / atomically saved file (0 skips it).") var placedBigMiB = 64
    @Flag(help: "The account is encrypted end to end (a side-by-side figure of its cost).") var encrypted = false
    @Option(help: "Seed of the files' bytes (the same seed makes the same chunks: side-by-side wire bytes; default: a random one).") var seed: UInt64?

    func run() async throws {
        var server = try await BenchServer.start(label: "syncbench", blobs: blobs)
        if encrypted { server.accountKey = .generate() }
        let port = server.port

        let proxyA = LoopbackProxy(target: port), proxyB = LoopbackProxy(target: port)
        try proxyA.start(); try proxyB.start()
        let a = try await server.device("A", container: "bench.sync", port: proxyA.port)
        let b = try await server.device("B", container: "bench.sync", port: proxyB.port)
        await a.engine.start(); await b.engine.start()

        // 1. A new 1 MiB file written in A until it is complete in B.
        var latencies: [Double] = []
        // Fresh data each run (a system-seeded SplitMix: the system generator costs a system call
        // per 8 bytes, ~30 s of kernel time for the files of one run).
        let seed = self.seed ?? UInt64.random(in: 0...UInt64.max)
        print("seed \(seed)\(encrypted ? ", encrypted account" : "")")
        var rng = SplitMix(seed: seed)
        for i in 0..<runs {
            let bytes = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let name = "Documents/lat-\(i).bin"
            let start = ContinuousClock.now
            try Data(bytes).write(to: a.folder.appendingPathComponent(name))
            let target = b.folder.appendingPathComponent(name).path
            while (try? FileManager.default.attributesOfItem(atPath: target)[.size] as? Int) != 1 << 20 { try await Task.sleep(for: .microseconds(200)) }
            latencies.append(seconds(ContinuousClock.now - start) * 1000)
        }
        latencies.sort()
        print(String(format: "new 1 MiB file A → complete in B: median %.1f ms, p95 %.1f ms (n=%d)", median(latencies),
                     latencies[Int(Double(latencies.count - 1) * 0.95)], runs))

        // 1b. Files that arrive by a rename: moved into the folder from outside it, and saved
        //     atomically (written to a temporary name beside the document, renamed over it).
        let staging = try TempDirectory("syncbench-staging")
        defer { staging.remove() }
        for (label, size, n) in [("5 KB", 5_000, placedRuns), ("\(placedBigMiB) MiB", placedBigMiB << 20, placedBigMiB > 0 ? 3 : 0)] where n > 0 {
            var moved: [Double] = [], saved: [Double] = []
            for i in 0..<n {
                var bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) }
                let name = "Documents/placed-\(size)-\(i).bin"
                let outside = staging.url.appendingPathComponent("in-\(i)")
                try Data(bytes).write(to: outside)
                var want = ContentHash.of(bytes)
                var start = ContinuousClock.now
                guard rename(outside.path, a.folder.appendingPathComponent(name).path) == 0 else { throw CleanExit.message("rename failed") }
                moved.append(seconds(try await waitFor(b.folder.appendingPathComponent(name), want) - start) * 1000)
                // An editor's save of the same document: new bytes under a temporary name, renamed over it.
                bytes[bytes.count / 2] &+= 1
                bytes[0] &+= 1
                let tmp = a.folder.appendingPathComponent("Documents/.placed-\(size)-\(i).bin.tmp")
                try Data(bytes).write(to: tmp)
                want = ContentHash.of(bytes)
                let before = Self.statKey(b.folder.appendingPathComponent(name))
                start = ContinuousClock.now
                guard rename(tmp.path, a.folder.appendingPathComponent(name).path) == 0 else { throw CleanExit.message("rename failed") }
                saved.append(seconds(try await waitFor(b.folder.appendingPathComponent(name), want, unlike: before) - start) * 1000)
            }
            print(String(format: "%@ file moved in A → complete in B: median %.0f ms (min %.0f, max %.0f); saved atomically: median %.0f ms (min %.0f, max %.0f) (n=%d)",
                         label, median(moved.sorted()), moved.min() ?? 0, moved.max() ?? 0, median(saved.sorted()), saved.min() ?? 0, saved.max() ?? 0, n))
        }

        // 2. One byte changed in a synced 64 MiB file, then one byte inserted at its start.
        var big = (0..<(64 << 20)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let bigA = a.folder.appendingPathComponent("Documents/big.bin"), bigB = b.folder.appendingPathComponent("Documents/big.bin")
        try Data(big).write(to: bigA)
        try await waitFor(bigB, ContentHash.of(big))
        try await Task.sleep(for: .milliseconds(500))
        for (label, edit) in [("1 byte changed in the middle", 0), ("1 byte inserted at the start", 1)] {
            var times: [Double] = [], wires: [Double] = [], writeTimes: [Double] = []
            for _ in 0..<editRuns {
                if edit == 0 { big[big.count / 2] &+= 1 } else { big.insert(0x42, at: 0) }
                proxyA.reset(); proxyB.reset()
                // What B must end with, and B's file as it is now, known before the clock starts:
                // hashing 64 MiB twice on the clock took a core from the devices.
                let want = ContentHash.of(big), before = Self.statKey(bigB)
                // The clock starts when the edit is saved (the writer closed the file): writing
                // 64 MiB into the page cache is the editor's time, not the sync's.
                let writeStart = ContinuousClock.now
                if edit == 0 {
                    let h = try FileHandle(forWritingTo: bigA)
                    try h.seek(toOffset: UInt64(big.count / 2))
                    try h.write(contentsOf: Data([big[big.count / 2]]))
                    try h.close()
                } else {
                    try Data(big).write(to: bigA)
                }
                let start = ContinuousClock.now
                writeTimes.append(seconds(start - writeStart) * 1000)
                if ProcessInfo.processInfo.environment["UBIQ_BENCH_DEBUG"] != nil {
                    FileHandle.standardError.write(Data(String(format: "%10.1f bench: edit saved\n", (start - TimelineLogHandler.origin) / .milliseconds(1)).utf8))
                }
                let done = try await waitFor(bigB, want, unlike: before)
                let ms = seconds(done - start) * 1000
                try await Task.sleep(for: .milliseconds(300))
                let (au, ad) = proxyA.bytes, (bu, bd) = proxyB.bytes
                print(String(format: "  64 MiB file, %@: %.0f ms; wire A↔server %.1f KiB (up %.1f, down %.1f), server↔B %.1f KiB (up %.1f, down %.1f), both legs %.1f KiB",
                             label, ms, Double(au + ad) / 1024, Double(au) / 1024, Double(ad) / 1024, Double(bu + bd) / 1024, Double(bu) / 1024,
                             Double(bd) / 1024, Double(au + ad + bu + bd) / 1024))
                times.append(ms); wires.append(Double(au + ad + bu + bd) / 1024)
            }
            print(String(format: "64 MiB file, %@: saved in A → complete in B median %.0f ms (min %.0f, max %.0f), both legs median %.1f KiB (n=%d; saving took median %.0f ms)", label,
                         median(times.sorted()), times.min() ?? 0, times.max() ?? 0, median(wires.sorted()), editRuns, median(writeTimes.sorted())))
        }
        print(String(format: "process RSS (server + two engines): %.0f MiB", rssMiB()))
        await a.engine.stop(); await b.engine.stop()
        await server.stop()
    }

    /// Waits until `url` holds content hashing to `hash`. Polls the file's status every
    /// millisecond and hashes only when it changed (a new inode, size or mtime), so the
    /// measurement does not steal a core from the devices by re-hashing 64 MiB per poll.
    /// Returns when the matching status was first seen.
    @discardableResult
    func waitFor(_ url: URL, _ hash: ContentHash, unlike before: [Int]? = nil) async throws -> ContinuousClock.Instant {
        let deadline = ContinuousClock.now + .seconds(120)
        var checked: [Int]? = before
        while ContinuousClock.now < deadline {
            if let key = Self.statKey(url) {
                if key != checked {
                    let seen = ContinuousClock.now
                    checked = key
                    if let d = try? Data(contentsOf: url), ContentHash.of(d) == hash { return seen }
                }
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        throw CleanExit.message("timed out waiting for \(url.lastPathComponent)")
    }

    /// A file's inode, size and modification time (nil: no file).
    static func statKey(_ url: URL) -> [Int]? {
        var st = stat()
        guard stat(url.path, &st) == 0 else { return nil }
        return [Int(st.st_ino), Int(st.st_size), st.st_mtim.tv_sec, st.st_mtim.tv_nsec]
    }
}
