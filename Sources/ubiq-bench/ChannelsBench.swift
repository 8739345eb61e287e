import ArgumentParser
import Foundation
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqProtocol

/// `ubiq-bench channels`: one account with thousands of push channels open on one embedded
/// server (#42 "many devices on one server"): the time one change takes to reach every channel,
/// the memory each channel adds and the CPU the process spends while every channel is idle.
/// The clients are in the same process (memory and idle CPU count both ends of each channel).
struct ChannelsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "channels", abstract: "Many push channels: fan-out, memory per channel, idle CPU.")

    @Option(help: "Push channels of one account held open.") var channels = 3000
    @Option(help: "Seconds of idle CPU measured.") var idleSeconds = 20
    @Option(help: "Changes fanned out (timed).") var samples = 10

    /// Counts messages by kind as they reach any channel.
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var hellos = 0, changes: [Int64: Int] = [:]
        func got(_ m: PushMessage) {
            lock.withLock {
                if m.kind == .hello { hellos += 1 } else if m.kind == .changes { changes[m.cursor, default: 0] += 1 }
            }
        }
        var helloCount: Int { lock.withLock { hellos } }
        /// Channels told of a change at `cursor` or later (each change is told once a channel).
        func reached(_ cursor: Int64) -> Int { lock.withLock { changes.reduce(0) { $0 + ($1.key >= cursor ? $1.value : 0) } } }
    }

    func run() async throws {
        let server = try await BenchServer.start(label: "channels", maxConnections: channels + 100) { $0.pushChannelsPerAccount = channels + 10 }
        let url = "http://127.0.0.1:\(server.port)"
        let (listener, _) = try await UbiqAPIClient(baseURL: url).login(user: "bench", password: "bench-pw", deviceName: "listeners")
        let (writer, _) = try await UbiqAPIClient(baseURL: url).login(user: "bench", password: "bench-pw", deviceName: "writer")
        let container = try ContainerID(validating: "bench.channels")
        ProcessMemory.trim()
        let before = rssMiB()
        let tally = Tally()
        let opened = ContinuousClock.now
        let tasks = (0..<channels).map { _ in Task { try? await listener.listen { tally.got($0) } } }
        defer { tasks.forEach { $0.cancel() } }
        while tally.helloCount < channels {
            guard ContinuousClock.now - opened < .seconds(300) else { throw CleanExit.message("only \(tally.helloCount) of \(channels) channels opened in 300 s") }
            try await Task.sleep(for: .milliseconds(50))
        }
        let openSeconds = seconds(ContinuousClock.now - opened)
        try await Task.sleep(for: .seconds(2))
        ProcessMemory.trim()
        let after = rssMiB()
        print(String(format: "%d push channels of one account opened in %.1f s; memory %.1f KiB a channel (server and client ends, RSS %.0f → %.0f MiB)",
                     channels, openSeconds, (after - before) * 1024 / Double(channels), before, after))
        let cpu0 = cpuSeconds()
        try await Task.sleep(for: .seconds(idleSeconds))
        let cpu1 = cpuSeconds()
        let idle = (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / Double(idleSeconds) * 100
        print(String(format: "idle, every channel open, %d s: %.1f %% of a core (user %.2f s, system %.2f s)",
                     idleSeconds, idle, cpu1.user - cpu0.user, cpu1.system - cpu0.system))
        var fanOut: [Double] = []
        for i in 0..<samples {
            let bytes = Array("fan-out \(i)".utf8)
            try await writer.uploadChunks([bytes])
            let start = ContinuousClock.now
            let r = try await writer.commit(container, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()),
                                                                     path: try RelativePath(validating: "f\(i).txt"), kind: .file, base: nil,
                                                                     modified: Date(), manifest: Manifest.of(bytes)))
            while tally.reached(r.item.changeSeq) < channels {
                guard ContinuousClock.now - start < .seconds(60) else {
                    throw CleanExit.message("change \(i) reached \(tally.reached(r.item.changeSeq)) of \(channels) channels in 60 s")
                }
                try await Task.sleep(for: .milliseconds(1))
            }
            fanOut.append(seconds(ContinuousClock.now - start) * 1000)
        }
        fanOut.sort()
        print(String(format: "one change → every channel (%d samples, the commit included): median %.1f ms, max %.1f ms",
                     fanOut.count, fanOut[fanOut.count / 2], fanOut.last ?? 0))
        tasks.forEach { $0.cancel() }
        await server.stop()
    }
}
