import ArgumentParser
import Foundation
import UbiqCore
import UbiqEngine

/// Many small files, one big file and a start-up scan between two devices (A and B, each its
/// own engine and home) through a real server on loopback.
struct BulkBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bulk", abstract: "10,000 small files, one big file, a start-up scan.")

    @Option(help: "The server's --blobs (s3://BUCKET?endpoint=…; credentials from AWS_*); default: its data folder.") var blobs: String?
    @Option(help: "Metadata in PostgreSQL: a postgres:// URL whose role may create databases (the bench makes one and drops it); default: SQLite.") var database: String?
    @Flag(help: "Device B on a second server on the same --database and --blobs: the sync crosses servers (push through PostgreSQL).") var twoServers = false
    @Option(help: "Small files (1–8 KiB each).") var files = 10_000
    @Option(help: "Size of the big file in MiB (0 skips it).") var bigMiB = 1024
    @Option(help: "Runs of the start-up scan.") var scanRuns = 5
    @Flag(help: "Flush the big file in A to disk before the clock starts (the figure is then the sync's own, without the kernel writing back A's file meanwhile on the same disk).")
    var flushSource = false
    @Flag(help: "Keep chunks unsealed on the server (a side-by-side figure of sealing's cost; the product always seals).") var unsealed = false
    @Flag(help: "The account is encrypted end to end (a side-by-side figure of its cost).") var encrypted = false

    func run() async throws {
        var server = try await BenchServer.start(label: "bulkbench", blobs: blobs, database: database, unsealed: unsealed)
        if encrypted { server.accountKey = .generate() }
        if twoServers && (server.made == nil || blobs == nil) { throw CleanExit.message("--two-servers needs --database and --blobs (what servers share)") }
        let second = twoServers ? try await BenchServer.start(label: "bulkbench-2", blobs: blobs, shared: server.made) : nil
        let a = try await server.device("A", container: "bench.bulk")
        let b = try await server.device("B", container: "bench.bulk", port: second?.port)
        await a.engine.start(); await b.engine.start()
        let docsA = a.folder.appendingPathComponent("Documents"), docsB = b.folder.appendingPathComponent("Documents")

        // 1. A folder of small files (in 100 subfolders), prepared beside the container on the
        //    same file system, is moved into A's Documents (like dropping a folder in); the clock
        //    runs from the move until every file is complete in B.
        var rng = SplitMix(seed: 42)
        let staging = a.home.containersRoot.appendingPathComponent("staging-\(UUID().uuidString.prefix(6))")
        var totalBytes = 0
        for i in 0..<files {
            let dir = staging.appendingPathComponent("d\(i % 100)")
            if i < 100 { try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true) }
            let bytes = (0..<Int.random(in: 1024...8192, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            totalBytes += bytes.count
            try Data(bytes).write(to: dir.appendingPathComponent("f\(i).bin"))
        }
        // The clock runs from just before the move to the last file's arrival in B, read after the
        // fact from the file's change time (set by its rename into place, after its fsync; the
        // kernel's coarse clock, so the start is read from that clock too). B's folder is only
        // polled every 250 ms for the end: walking 10,000 files every few ms to time them would
        // take CPU from the devices being measured.
        var now = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        let start = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        let cpu0 = cpuSeconds()
        guard rename(staging.path, docsA.appendingPathComponent("many").path) == 0 else { throw CleanExit.message("cannot move the prepared folder in") }
        try await waitUntil(seconds: 600, every: .milliseconds(250)) { count(in: docsB) == files }
        guard let end = lastChange(in: docsB) else { throw CleanExit.message("cannot read the files' change times") }
        let ms = (end - start) * 1000
        let cpu = cpuSeconds()  // to the end of the 250 ms poll that saw the last file
        print(String(format: "%d files of 1–8 KiB (%.1f MiB) in 100 folders moved into A → all complete in B: %.2f s (%.0f files/s); CPU (A, server and B together) %.2f s user + %.2f s system",
                     files, Double(totalBytes) / 1_048_576, ms / 1000, Double(files) / (ms / 1000), cpu.user - cpu0.user, cpu.system - cpu0.system))
        try await waitUntil(seconds: 120) { let ia = await a.engine.isIdle(); let ib = await b.engine.isIdle(); return ia && ib }

        // 2. Start-up of a fresh engine on B's home with everything unchanged: load state, scan, plan.
        await b.engine.stop()
        var startups: [Double] = []
        let startupCPU0 = cpuSeconds()
        for _ in 0..<scanRuns {
            let t0 = ContinuousClock.now
            let engine = try SyncEngine(home: b.home, config: b.config, logger: b.logger)
            await engine.start()
            await engine.syncNow()
            startups.append(seconds(ContinuousClock.now - t0) * 1000)
            let st = await engine.status()
            await engine.stop()
            guard st.uploads.queued + st.uploads.running + st.downloads.queued + st.downloads.running == 0 else { throw CleanExit.message("the fresh engine found work to do; the start-up measure is void") }
        }
        let startupCPU = cpuSeconds()
        print(String(format: "start-up of a fresh engine over %d unchanged files (load state + scan + plan, one server round trip): median %.0f ms (min %.0f, n=%d); CPU per start-up %.0f ms user + %.0f ms system",
                     files + 100, median(startups), startups.min() ?? 0, scanRuns,
                     (startupCPU.user - startupCPU0.user) * 1000 / Double(max(1, scanRuns)), (startupCPU.system - startupCPU0.system) * 1000 / Double(max(1, scanRuns))))

        // 3. One big file written in A until complete in B.
        if bigMiB > 0 {
            let b2 = try SyncEngine(home: b.home, config: b.config, logger: b.logger)
            await b2.start()
            let big = docsA.appendingPathComponent("big.bin"), bigB = docsB.appendingPathComponent("big.bin")
            let size = bigMiB << 20
            var block = [UInt8](repeating: 0, count: 1 << 20)
            let fd = open(big.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            for _ in 0..<bigMiB {
                for j in 0..<block.count { block[j] = UInt8.random(in: 0...255, using: &rng) }
                _ = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            }
            if flushSource { fsync(fd) }
            close(fd)
            let cpu0 = cpuSeconds()
            let t0 = ContinuousClock.now
            try await waitUntil(seconds: 600) {
                var st = stat()
                return stat(bigB.path, &st) == 0 && Int(st.st_size) == size
            }
            let s = seconds(ContinuousClock.now - t0)
            let cpu = cpuSeconds()
            print(String(format: "one %d MiB file written in A%@ → complete (fsynced) in B: %.2f s, %.0f MiB/s; CPU (A, server and B together) %.2f s user + %.2f s system",
                         bigMiB, flushSource ? " (flushed first)" : "", s, Double(bigMiB) / s, cpu.user - cpu0.user, cpu.system - cpu0.system))
            await b2.stop()
        }
        print(String(format: "process RSS (server + two engines): %.0f MiB", rssMiB()))
        await a.engine.stop()
        await second?.stop()
        await server.stop()
    }

    /// Calls `body` with the path of every `.bin` file under `folder`, found with readdir
    /// (FileManager's enumerator costs so much CPU that polling it would slow the devices being
    /// measured).
    func forEachFile(under folder: URL, _ body: (String) -> Void) {
        func walk(_ path: String) {
            guard let d = opendir(path) else { return }
            defer { closedir(d) }
            while let e = readdir(d) {
                let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name == "." || name == ".." { continue }
                if e.pointee.d_type == UInt8(DT_DIR) { walk(path + "/" + name) } else if name.hasSuffix(".bin") { body(path + "/" + name) }
            }
        }
        walk(folder.path)
    }

    /// How many `.bin` files are under `folder`.
    func count(in folder: URL) -> Int {
        var n = 0
        forEachFile(under: folder) { _ in n += 1 }
        return n
    }

    /// The latest change time (seconds since 1970) of the `.bin` files under `folder`.
    func lastChange(in folder: URL) -> Double? {
        var latest: Double?
        forEachFile(under: folder) { path in
            if let t = Self.changeTime(path) { latest = max(latest ?? t, t) }
        }
        return latest
    }

    static func changeTime(_ path: String) -> Double? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return Double(st.st_ctim.tv_sec) + Double(st.st_ctim.tv_nsec) / 1e9
    }

    func waitUntil(seconds limit: Int, every poll: Duration = .milliseconds(20), _ done: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(limit)
        while ContinuousClock.now < deadline {
            if await done() { return }
            try await Task.sleep(for: poll)
        }
        throw CleanExit.message("timed out")
    }
}

/// A small seeded generator (SplitMix64), so runs write the same data.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
