import ArgumentParser
import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

/// What the hostile manifest deltas of #45 row 1 cost the server now: a 956-byte delta of 23
/// `copy [0, 65536]` pieces, a 3.8 KB request of four of them (604 MB and 2.1 s before), and a
/// request of 1,000 one-piece deltas (65 M references), each against a base of 65,536
/// references. Time to the refusal and the growth of the process's peak resident memory
/// (`VmHWM`, reset through `/proc/self/clear_refs` before each).
struct HostileDeltaBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "hostile-delta",
                                                     abstract: "Refusal time and peak memory of expanding manifest deltas (#45 row 1).")

    @Option(help: "Times each request is sent (the median is printed).") var runs = 20

    func run() async throws {
        let server = try await BenchServer.start(label: "hostile-delta")
        let url = "http://127.0.0.1:\(server.port)"
        let login = try await UbiqAPIClient(baseURL: url).login(user: "bench", password: "bench-pw", deviceName: "attacker").1
        let c = UbiqAPIClient(baseURL: url, token: login.token)
        let container = try ContainerID(validating: "TEAM.com.example.bench")
        let chunk = ChunkRef(hash: ContentHash.of([7]), size: 1)
        let item = ItemID(uuid: UUID())
        let r = try await c.commit(container, CommitRequest(itemID: item, versionID: VersionID(uuid: UUID()), path: try RelativePath(validating: "Documents/base.bin"),
                                                            kind: .file, base: nil, modified: Date(), manifest: Manifest(chunks: Array(repeating: chunk, count: 65_536))))
        guard let base = r.version?.id else { throw ValidationError("no base version") }
        func delta(_ pieces: Int) -> CommitRequest {
            let h = ContentHash.of(Array("x".utf8))
            return CommitRequest(itemID: item, versionID: VersionID(uuid: UUID()), path: try! RelativePath(validating: "Documents/base.bin"), kind: .file, base: base,
                                 modified: Date(), manifest: nil,
                                 manifestDelta: ManifestDelta(base: base, pieces: Array(repeating: .copy(from: 0, count: 65_536), count: pieces), size: pieces * 65_536, hash: h, digest: h))
        }
        let cases: [(String, () async throws -> Void)] = [
            ("one commit, 23 pieces (956 B)", { _ = try await c.commit(container, delta(23)) }),
            ("four such commits (3.8 KB)", { _ = try await c.commitMany(container, (0..<4).map { _ in delta(23) }) }),
            ("1,000 one-piece commits", { _ = try await c.commitMany(container, (0..<1000).map { _ in delta(1) }) }),
        ]
        print("case                             refused  median ms  peak RSS growth MiB (max)")
        for (name, send) in cases {
            var times: [Double] = [], growth: [Double] = []
            var refusedAll = true
            for _ in 0..<runs {
                try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
                let before = peakMiB()
                let t0 = ContinuousClock.now
                do { try await send(); refusedAll = false } catch {}
                times.append(seconds(ContinuousClock.now - t0) * 1000)
                growth.append(peakMiB() - before)
            }
            print(String(format: "%@ %@  %9.2f  %9.1f", name.padding(toLength: 32, withPad: " ", startingAt: 0), refusedAll ? "yes    " : "NO     ",
                         median(times), growth.max() ?? 0))
        }
        await server.stop()
    }

    /// Peak resident set size of this process in MiB (`VmHWM`).
    func peakMiB() -> Double {
        guard let s = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = s.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kb = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kb / 1024
    }
}
