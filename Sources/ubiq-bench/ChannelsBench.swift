import ArgumentParser
import Foundation
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqProtocol

/// `ubiq-bench channels`: one account with thousands of push channels open on one embedded
/// server (#42 "many devices on one server"): the time one change takes to reach every channel,
/// the memory each channel costs the server and the CPU the server spends while every channel
/// is idle. The channels' client ends are another process (`--listen-to`, started by the bench
/// itself), so memory and idle CPU are the server's alone.
struct ChannelsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "channels", abstract: "Many push channels: fan-out, memory per channel, idle CPU.")

    @Option(help: "Push channels of one account held open.") var channels = 3000
    @Option(help: "Seconds of idle CPU measured.") var idleSeconds = 20
    @Option(help: "Changes fanned out (timed).") var samples = 10
    @Option(help: .hidden) var listenTo: String?

    /// Counts messages by kind as they reach any channel, and says so on standard output once
    /// every channel has had its hello (`open`) or a change (`all CURSOR`).
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private let channels: Int
        private var hellos = 0, changes: [Int64: Int] = [:]
        init(channels: Int) { self.channels = channels }
        func got(_ m: PushMessage) {
            let line: String? = lock.withLock {
                if m.kind == .hello {
                    hellos += 1
                    return hellos == channels ? "open" : nil
                }
                guard m.kind == .changes else { return nil }
                changes[m.cursor, default: 0] += 1
                return changes[m.cursor] == channels ? "all \(m.cursor)" : nil
            }
            if let line { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
        }
    }

    /// The listening end: `channels` push channels on the token in `UBIQ_BENCH_TOKEN`, until
    /// standard input closes.
    func listen(_ url: String) async throws {
        guard let token = ProcessInfo.processInfo.environment["UBIQ_BENCH_TOKEN"] else { throw CleanExit.message("UBIQ_BENCH_TOKEN is not set") }
        let client = UbiqAPIClient(baseURL: url, token: token)
        let tally = Tally(channels: channels)
        let tasks = (0..<channels).map { _ in Task { try? await client.listen { tally.got($0) } } }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread { while !FileHandle.standardInput.availableData.isEmpty {}; done.resume() }
        }
        tasks.forEach { $0.cancel() }
    }

    func run() async throws {
        if let url = listenTo { return try await listen(url) }
        let server = try await BenchServer.start(label: "channels", maxConnections: channels + 100) { $0.pushChannelsPerAccount = channels + 10 }
        let url = "http://127.0.0.1:\(server.port)"
        let (listener, _) = try await UbiqAPIClient(baseURL: url).login(user: "bench", password: "bench-pw", deviceName: "listeners")
        let (writer, _) = try await UbiqAPIClient(baseURL: url).login(user: "bench", password: "bench-pw", deviceName: "writer")
        let container = try ContainerID(validating: "bench.channels")
        ProcessMemory.trim()
        let before = rssMiB()
        let lines = try Listeners.start(url: url, token: listener.token ?? "", channels: channels)
        defer { lines.stop() }
        let opened = ContinuousClock.now
        guard try await lines.wait(upTo: .seconds(300), for: { $0 == "open" }) else {
            throw CleanExit.message("\(channels) channels did not open in 300 s")
        }
        let openSeconds = seconds(ContinuousClock.now - opened)
        try await Task.sleep(for: .seconds(2))
        ProcessMemory.trim()
        let after = rssMiB()
        print(String(format: "%d push channels of one account opened in %.1f s; the server's memory %.1f KiB a channel (RSS %.0f → %.0f MiB; clients in another process)",
                     channels, openSeconds, (after - before) * 1024 / Double(channels), before, after))
        let cpu0 = cpuSeconds()
        try await Task.sleep(for: .seconds(idleSeconds))
        let cpu1 = cpuSeconds()
        let idle = (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / Double(idleSeconds) * 100
        print(String(format: "the server idle, every channel open, %d s: %.2f %% of a core (user %.2f s, system %.2f s)",
                     idleSeconds, idle, cpu1.user - cpu0.user, cpu1.system - cpu0.system))
        var fanOut: [Double] = []
        for i in 0..<samples {
            let bytes = Array("fan-out \(i)".utf8)
            try await writer.uploadChunks([bytes])
            let start = ContinuousClock.now
            let r = try await writer.commit(container, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()),
                                                                     path: try RelativePath(validating: "f\(i).txt"), kind: .file, base: nil,
                                                                     modified: Date(), manifest: Manifest.of(bytes)))
            let seq = r.item.changeSeq
            guard try await lines.wait(upTo: .seconds(60), for: { $0.hasPrefix("all ") && (Int64($0.dropFirst(4)) ?? 0) >= seq }) else {
                throw CleanExit.message("change \(i) did not reach all \(channels) channels in 60 s")
            }
            fanOut.append(seconds(ContinuousClock.now - start) * 1000)
        }
        fanOut.sort()
        print(String(format: "one change → every channel (%d samples, the commit included): median %.1f ms, max %.1f ms",
                     fanOut.count, fanOut[fanOut.count / 2], fanOut.last ?? 0))
        lines.stop()
        await server.stop()
    }
}

/// The listening process (this executable with `channels --listen-to`) and the lines it prints.
final class Listeners: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let lock = NSLock()
    private var seen: [String] = []

    static func start(url: String, token: String, channels: Int) throws -> Listeners {
        let l = Listeners()
        let output = Pipe()
        l.process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        l.process.arguments = ["channels", "--listen-to", url, "--channels", String(channels)]
        l.process.environment = ProcessInfo.processInfo.environment.merging(["UBIQ_BENCH_TOKEN": token]) { $1 }
        l.process.standardInput = l.input
        l.process.standardOutput = output
        try l.process.run()
        Thread.detachNewThread {
            var pending = Data()
            while case let d = output.fileHandleForReading.availableData, !d.isEmpty {
                pending.append(d)
                while let nl = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<nl], as: UTF8.self)
                    pending.removeSubrange(...nl)
                    l.lock.withLock { l.seen.append(line) }
                }
            }
        }
        return l
    }

    /// True once a line `matching` was printed (within `limit`).
    func wait(upTo limit: Duration, for matching: (String) -> Bool) async throws -> Bool {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit {
            if lock.withLock({ seen.contains(where: matching) }) { return true }
            guard process.isRunning else { return false }
            try await Task.sleep(for: .microseconds(200))
        }
        return false
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.waitUntilExit() }
    }
}
