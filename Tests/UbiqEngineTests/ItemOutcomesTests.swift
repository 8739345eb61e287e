import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// What became of items' steps (`ItemOutcomes`): failures listed until they come right, retries
/// held back by their delays, abandoned versions kept across restarts until the server moves on.
@Suite("Item outcomes")
struct ItemOutcomesTests {
    static func id(_ n: Int) -> ItemID { NumberedIDs.item(n) }
    static func v(_ n: Int) -> VersionID { NumberedIDs.version(n) }

    @Test func aFailureIsListedAndHeldBackUntilItsRetryOrItComesRight() {
        let o = ItemOutcomes(log: UbiqEngine.ChangeLog(), abandonedText: nil)
        let t0 = ContinuousClock.now
        o.failed(Self.id(1), code: "path_exists", message: "taken", now: t0, wall: Date())
        o.failed(Self.id(2), code: "x", message: "m", now: t0, wall: Date())
        #expect(o.errors[Self.id(1)] == "taken [path_exists]")
        let ops: [SyncOp] = [SyncOp.upload(Self.id(1), base: nil), SyncOp.download(Self.id(3), version: Self.v(3))]
        let held = o.withoutWaiting(ops, now: t0 + .milliseconds(100)) { _ in true }
        #expect(held.ops == [SyncOp.download(Self.id(3), version: Self.v(3))], "item 1 waits out its delay")
        #expect(held.nextRetry == t0 + ItemBackoff.first)
        // After the delay: item 1 is tried again; item 2, which the plan no longer touches, came right.
        let due = o.withoutWaiting(ops, now: t0 + .seconds(1)) { _ in true }
        #expect(due.ops == ops)
        #expect(o.errors[Self.id(2)] == nil && o.backoff.entries[Self.id(2)] == nil)
        #expect(o.errors[Self.id(1)] != nil, "still failing until its step succeeds")
        o.succeeded(Self.id(1))
        #expect(o.errors[Self.id(1)] == nil && o.backoff.entries.isEmpty)
        // An item no tree knows any more is dropped even while it waits.
        o.failed(Self.id(4), code: "x", message: "m", now: t0, wall: Date())
        _ = o.withoutWaiting([], now: t0) { $0 != Self.id(4) }
        #expect(o.errors[Self.id(4)] == nil && o.backoff.entries.isEmpty)
    }

    @Test func retryNowEndsTheWaitButKeepsTheCountOfFailures() {
        let o = ItemOutcomes(log: UbiqEngine.ChangeLog(), abandonedText: nil)
        let t0 = ContinuousClock.now
        for _ in 0..<4 { o.failed(Self.id(1), code: "x", message: "m", now: t0, wall: Date()) }
        o.failed(Self.id(2), code: "x", message: "m", now: t0, wall: Date())
        let ops: [SyncOp] = [.upload(Self.id(1), base: nil), .upload(Self.id(2), base: nil)]
        #expect(o.withoutWaiting(ops, now: t0 + .milliseconds(10)) { _ in true }.ops.isEmpty, "both wait")
        #expect(o.retryNow([Self.id(1), Self.id(3)], now: t0 + .milliseconds(10)) == 1, "item 3 was not failing")
        #expect(o.withoutWaiting(ops, now: t0 + .milliseconds(10)) { _ in true }.ops == [ops[0]], "item 1 goes now, item 2 still waits")
        #expect(o.errors[Self.id(1)] != nil, "listed until it succeeds")
        // Failing again waits as long as a fifth failure in a row does.
        o.failed(Self.id(1), code: "x", message: "m", now: t0, wall: Date())
        #expect(o.backoff.entries[Self.id(1)]?.retryAt == t0 + ItemBackoff.delay(afterAttempts: 5))
        #expect(o.retryNow(nil, now: t0) == 2, "all failing items")
    }

    @Test func abandonedVersionsSurviveARestartUntilTheServerMovesOn() {
        let o = ItemOutcomes(log: UbiqEngine.ChangeLog(), abandonedText: nil)
        #expect(o.abandonedText == nil)
        o.abandon(Self.v(1))
        o.abandon(Self.v(2))
        let read = ItemOutcomes(log: UbiqEngine.ChangeLog(), abandonedText: (o.abandonedText ?? "") + ",junk")
        #expect(read.abandoned == [Self.v(1), Self.v(2)], "damaged parts are skipped")
        let same = o.currentAbandoned { _ in true }
        #expect(same.versions == [Self.v(1), Self.v(2)] && !same.changed)
        let moved = o.currentAbandoned { $0 == Self.v(2) }
        #expect(moved.versions == [Self.v(2)] && moved.changed && o.abandoned == [Self.v(2)])
    }

    /// Random failures, successes and plans: an item's error is listed exactly while its backoff
    /// entry exists, a plan never runs a step whose item waits, and never drops one that is due.
    @Test func randomSequencesKeepErrorsAndRetriesInStep() {
        let seed = ProcessInfo.processInfo.environment["UBIQ_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
        print("[item.outcomes] seed \(seed) (replay with UBIQ_SEED=\(seed))")
        var rng = SeededRandom(seed: seed)
        for _ in 0..<100 {
            let o = ItemOutcomes(log: UbiqEngine.ChangeLog(), abandonedText: nil)
            var now = ContinuousClock.now
            for _ in 0..<100 {
                let id = Self.id(Int.random(in: 0..<8, using: &rng))
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: o.failed(id, code: "c", message: "m", now: now, wall: Date())
                case 1: o.succeeded(id)
                case 2: now = now + .milliseconds(Int.random(in: 0...3_000, using: &rng))
                default:
                    let ops = (0..<8).filter { _ in Bool.random(using: &rng) }.map { SyncOp.markSynced(Self.id($0)) }
                    let before = o.backoff
                    let kept = o.withoutWaiting(ops, now: now) { _ in true }.ops
                    #expect(kept == ops.filter { !before.waiting($0.item, now: now) }, "seed \(seed)")
                }
                for n in 0..<8 {
                    #expect((o.errors[Self.id(n)] != nil) == (o.backoff.entries[Self.id(n)] != nil), "seed \(seed)")
                }
            }
        }
    }
}
