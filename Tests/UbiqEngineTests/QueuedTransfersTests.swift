import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// `status`'s queued transfers kept as totals (#42) against the count it replaced — every
/// step of the plan looked at, those running or ended left out — over seeded plans, ends and
/// running sets.
@Suite("Queued transfers")
struct QueuedTransfersTests {
    @Test func totalsAgreeWithCountingEveryStep() {
        var rng = SeededRandom.forTest("queued.transfers")
        for round in 0..<300 {
            let ids = (0..<Int(1 + rng.next() % 40)).map { _ in ItemID(uuid: UUID()) }
            var sizes: [ItemID: Int64] = [:]
            for id in ids { sizes[id] = Int64(rng.next() % 10_000) }
            let ops: [SyncOp] = ids.compactMap { id in
                switch rng.next() % 4 {
                case 0: return .upload(id, base: nil)
                case 1: return .download(id, version: VersionID(uuid: UUID()))
                case 2: return .markSynced(id)
                default: return nil
                }
            }
            func size(_ op: SyncOp) -> Int64? {
                switch op {
                case .upload(let id, _), .download(let id, _): return sizes[id]
                default: return nil
                }
            }
            var ended = Set(ids.filter { _ in rng.next() % 5 == 0 })
            var q = QueuedTransfers(ops, ended: ended, size: size)
            for id in ids where rng.next() % 4 == 0 { ended.insert(id); q.remove(id) }
            let running = Set(ids.filter { _ in rng.next() % 6 == 0 })
            var up = (0, Int64(0)), down = (0, Int64(0))
            for op in ops where !running.contains(op.item) && !ended.contains(op.item) {
                guard let n = size(op) else { continue }
                if case .upload = op { up.0 += 1; up.1 += n } else { down.0 += 1; down.1 += n }
            }
            let got = q.tally(excluding: running)
            #expect(got.up.queued == up.0 && got.up.bytesTotal == up.1 && got.down.queued == down.0 && got.down.bytesTotal == down.1,
                    "seed \(rng.seed) round \(round)")
        }
    }
}
