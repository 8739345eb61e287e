import Foundation
import Testing
import UbiqCore
import UbiqTesting

/// Time-ordered IDs: version 7 and RFC variant bits, the clock's millisecond in the first 48
/// bits, and every ID after the one before it — in bytes and in text — whatever the clock does.
@Suite("Time-ordered UUIDs")
struct TimeOrderedUUIDTests {
    @Test func idsSortInTheOrderTheyWereMade() {
        var rng = SeededRandom.forTest("time-ordered-uuids")
        var gen = TimeOrderedUUIDs()
        var clock: UInt64 = 1_764_000_000_000 + UInt64.random(in: 0...1_000_000, using: &rng)
        var made: [ItemID] = []
        for _ in 0..<20_000 {
            // Mostly the same or the next millisecond; sometimes back (a clock step), sometimes far ahead.
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<60: break
            case 60..<90: clock += 1
            case 90..<97: clock -= UInt64.random(in: 1...5_000, using: &rng)
            default: clock += UInt64.random(in: 1...100_000, using: &rng)
            }
            let before = gen
            let u = gen.next(milliseconds: clock, random: rng.next())
            let b = withUnsafeBytes(of: u.uuid) { Array($0) }
            #expect(b[6] >> 4 == 7 && b[8] >> 6 == 2, "version 7, RFC variant; seed \(rng.seed)")
            let ms = b[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            #expect(ms == gen.milliseconds && ms >= min(clock, before.milliseconds), "seed \(rng.seed)")
            if clock > before.milliseconds { #expect(ms == clock && gen.counter == 0, "seed \(rng.seed)") }
            made.append(ItemID(uuid: u))
        }
        for (a, b) in zip(made, made.dropFirst()) {
            #expect(a < b && a.description < b.description, "\(a) then \(b); seed \(rng.seed)")
        }
    }

    /// 4,096 IDs fit one millisecond; the next one moves to the next millisecond, still in order.
    @Test func aFullMillisecondSpillsIntoTheNext() {
        var gen = TimeOrderedUUIDs()
        var last = ItemID(uuid: gen.next(milliseconds: 1_000, random: 0))
        for i in 1...4_100 {
            let id = ItemID(uuid: gen.next(milliseconds: 1_000, random: UInt64.max))
            #expect(last < id)
            last = id
            if i == 4_095 { #expect(gen.milliseconds == 1_000 && gen.counter == 0xFFF) }
            if i == 4_096 { #expect(gen.milliseconds == 1_001 && gen.counter == 0) }
        }
    }
}
