import Foundation
import Testing
import UbiqClient
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// #44 row 3: a batch of 10,000 uploads showed `↑ 10000 … 0%` for its whole run, and downloads
/// counted 1281 → 2215 → 1000 → 2446 as rounds were planned. The status now says how many files
/// and bytes of the run are done of how many in all, and neither ever falls while it lasts.
@Suite("Transfer progress that only grows")
struct TransferSessionTests {
    struct Sample: Equatable { var done: Int; var total: Int; var bytesDone: Int64; var bytesTotal: Int64 }

    /// Samples a device's download (or upload) progress until `until` holds.
    static func samples(_ d: TestDevice, upload: Bool, until: @escaping () -> Bool) async -> [Sample] {
        var out: [Sample] = []
        let deadline = ContinuousClock.now + .seconds(120)
        while !until(), ContinuousClock.now < deadline {
            let s = await d.engine.status()
            let t = upload ? s.uploads : s.downloads
            if let total = t.filesTotal, total > 0, t.running + t.queued > 0 {
                let sample = Sample(done: t.done ?? 0, total: total, bytesDone: t.bytesDone, bytesTotal: t.bytesTotal)
                if out.last != sample { out.append(sample) }
            }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return out
    }

    @Test func filesAndBytesDoneOfTheRunOnlyGrow() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            await b.stop()
            // Small files travel in batches of up to 500, three at once; big ones alone, with
            // their bytes counted as they go: a run of several steps.
            let n = 1_203
            var rng = SeededRandom.forTest("progress.session")
            for i in 0..<(n - 3) { try a.write("Documents/many/f\(i).bin", bytes: rng.bytes(Int.random(in: 500...4_000, using: &rng))) }
            for i in (n - 3)..<n { try a.write("Documents/many/f\(i).bin", bytes: rng.bytes(3 << 20)) }
            let client = UbiqAPIClient(baseURL: fleet.server.baseURL, token: a.config.token)
            #expect(await eventually(timeout: .seconds(120)) {
                ((try? await client.changes(a.config.container, after: 0, limit: 5_000).items) ?? []).filter { $0.path.string.hasPrefix("Documents/many/") && $0.current?.uploaded == true }.count == n
            }, "A's files reached the server")
            try await b.restart()
            let seen = await Self.samples(b, upload: false) { (0..<n).allSatisfy { b.exists("Documents/many/f\($0).bin") } }
            print("[progress] \(seen.count) distinct samples: \(seen.map { "\($0.done)/\($0.total) files, \($0.bytesDone)/\($0.bytesTotal) B" })")
            #expect(seen.count >= 2, "progress was sampled while it ran: \(seen)")
            for (p, q) in zip(seen, seen.dropFirst()) {
                #expect(q.done >= p.done && q.total >= p.total && q.bytesDone >= p.bytesDone && q.bytesTotal >= p.bytesTotal, "fell: \(p) → \(q)")
                #expect(q.done <= q.total && q.bytesDone <= q.bytesTotal, "more done than in all: \(q)")
            }
            #expect(seen.allSatisfy { $0.total == n }, "every file counted once (a finished batch is not queued again): \(seen)")
            #expect(seen.last.map { $0.done > 0 } == true, "files were done while sampled: \(String(describing: seen.last))")
            #expect(await converge(a, b), "\(describeDiff(a, b))")
        }
    }
}
