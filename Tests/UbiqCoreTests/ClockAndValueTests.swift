import Foundation
import Testing
import UbiqCore
import UbiqTesting

@Suite("Hybrid logical clock")
struct HLCTests {
    @Test func timestampsAreMonotonicAndReceivesMovePast() {
        var rng = SeededRandom.forTest("hlc")
        for _ in 0..<200 {
            var clock = HybridLogicalClock()
            var wall = Int64.random(in: 0...1_000_000, using: &rng)
            var last = HLCTimestamp.zero
            for _ in 0..<200 {
                // Wall clocks jump back and forth; remote clocks may be hours ahead or behind.
                wall += Int64.random(in: -5000...5000, using: &rng)
                if Bool.random(using: &rng) {
                    let t = clock.now(physicalMillis: wall)
                    #expect(t > last, "seed \(rng.seed)")
                    last = t
                } else {
                    let remote = HLCTimestamp(wallMillis: wall + Int64.random(in: -10_800_000...10_800_000, using: &rng),
                                              counter: UInt32.random(in: 0...5, using: &rng))
                    let t = clock.receive(remote, physicalMillis: wall)
                    #expect(t > remote && t > last, "seed \(rng.seed)")
                    last = t
                }
            }
        }
    }

    @Test func causallyLaterWriteWinsDespiteSlowClock() {
        var fast = HybridLogicalClock()
        var slow = HybridLogicalClock()
        let a = KVEntry(key: "k", value: .int(1), stamp: fast.now(physicalMillis: 10_000_000), device: DeviceID(uuid: UUID()))
        slow.receive(a.stamp, physicalMillis: 1_000)  // three hours behind
        let b = KVEntry(key: "k", value: .int(2), stamp: slow.now(physicalMillis: 1_001), device: DeviceID(uuid: UUID()))
        #expect(b.wins(over: a))
        #expect(KVMerge.winners([b], over: ["k": a]) == [b])
        #expect(KVMerge.winners([a], over: ["k": b]).isEmpty)
    }

    /// #23 row 8: a stamp of `Int64.max`/`UInt32.max` from another device trapped every device's
    /// clock (`ubiq kv ls` and the daemon crashed for ever). The clock now saturates there.
    @Test func theLargestStampSaturatesInsteadOfTrapping() {
        let end = HLCTimestamp(wallMillis: .max, counter: .max)
        var c = HybridLogicalClock()
        #expect(c.receive(end, physicalMillis: 1_000) == end)
        #expect(c.now(physicalMillis: 2_000) == end)
        #expect(c.receive(HLCTimestamp(wallMillis: .max, counter: 3), physicalMillis: .max) == end)
        var d = HybridLogicalClock(last: HLCTimestamp(wallMillis: .max, counter: .max - 1))
        #expect(d.now(physicalMillis: 0) == end)
        #expect(throws: CoreError.self) { try KVLimits.check(stamp: end, nowMillis: 1_000) }
        #expect(throws: Never.self) { try KVLimits.check(stamp: HLCTimestamp(wallMillis: 1_000 + 5 * 3_600_000, counter: .max), nowMillis: 1_000) }
        #expect(throws: Never.self) { try KVLimits.check(stamp: end, nowMillis: .max - 1) }
    }

    @Test func counterOverflowCarriesIntoWallTime() {
        var c = HybridLogicalClock(last: HLCTimestamp(wallMillis: 5, counter: .max))
        let t = c.now(physicalMillis: 1)
        #expect(t == HLCTimestamp(wallMillis: 6, counter: 0))
    }
}

@Suite("Key-value values and limits")
struct KVValueTests {
    @Test func everyTypeRoundTripsThroughJSON() throws {
        let values: [KVValue] = [
            .string("héllo 🎉"), .int(-42), .int(Int64.max), .double(3.25), .bool(true),
            .date(Date(timeIntervalSince1970: 1_700_000_000.123)), .data(Data([0, 1, 2, 255])),
            .array([.int(1), .string("x"), .array([])]), .dictionary(["a": .bool(false), "b": .dictionary(["c": .double(-1)])]),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for v in values {
            let data = try encoder.encode(v)
            let back = try JSONDecoder().decode(KVValue.self, from: data)
            if case .date(let d) = v, case .date(let e) = back {
                // Dates travel with millisecond precision.
                #expect(abs(d.timeIntervalSince(e)) < 0.001)
            } else {
                #expect(back == v)
            }
            #expect(try encoder.encode(back) == data)
        }
    }

    @Test func datesKeepMilliseconds() {
        var rng = SeededRandom.forTest("dates")
        for _ in 0..<2000 {
            let ms = Int64.random(in: -10_000_000_000_000...10_000_000_000_000, using: &rng)
            let d = Date(timeIntervalSince1970: Double(ms) / 1000)
            let s = KVDateFormat.format(d)
            let back = KVDateFormat.parse(s)
            #expect(back.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } == ms, "\(s) seed \(rng.seed)")
            #expect(back.map(KVDateFormat.format) == s)
        }
        #expect(KVDateFormat.parse("2026-11-22T10:42:00+02:00") != nil)
        #expect(KVDateFormat.parse("yesterday") == nil)
        #expect(KVDateFormat.parse("2026-11-22T10:42:00.Z") == nil)
    }

    /// The arithmetic fast path agrees with Foundation's ISO-8601 style on every year 0001–9999,
    /// for formatting and for parsing fractions of any length; impossible fields are refused.
    @Test func fastDateFormAgreesWithFoundation() {
        var rng = SeededRandom.forTest("civil-dates")
        let utc = TimeZone(identifier: "UTC")!
        func reference(_ d: Date) -> String {
            let ms = Int64((d.timeIntervalSince1970 * 1000).rounded())
            let (sec, frac) = ms.quotientAndRemainder(dividingBy: 1000)
            let whole = sec - (frac < 0 ? 1 : 0), f = frac < 0 ? frac + 1000 : frac
            let base = Date(timeIntervalSince1970: Double(whole)).formatted(Date.ISO8601FormatStyle(timeZone: utc))
            return String(base.dropLast()) + "." + String(format: "%03d", f) + "Z"
        }
        for _ in 0..<3000 {
            // Years 0001–9999 (-62,135,596,800 s is 0001-01-01).
            let ms = Int64.random(in: -62_135_596_800_000...253_402_300_799_999, using: &rng)
            let d = Date(timeIntervalSince1970: Double(ms) / 1000)
            let s = KVDateFormat.format(d)
            #expect(s == reference(d), "seed \(rng.seed)")
            let digits = Int.random(in: 1...9, using: &rng)
            let fraction = (0..<digits).map { _ in String(Int.random(in: 0...9, using: &rng)) }.joined()
            let text = String(s.prefix(19)) + "." + fraction + "Z"
            // Foundation's path as it was: whole seconds parsed, the fraction added, then rounded.
            let slow = (try? Date.ISO8601FormatStyle().parse(String(s.prefix(19)) + "Z")).map {
                KVDateFormat.roundedToMillis(Date(timeIntervalSince1970: $0.timeIntervalSince1970 + Double("0." + fraction)!))
            }
            #expect(KVDateFormat.parse(text) == slow, "\(text) seed \(rng.seed)")
        }
        for bad in ["2026-02-30T00:00:00Z", "2025-02-29T00:00:00.000Z", "2026-13-01T00:00:00Z", "2026-11-22T24:00:00Z",
                    "2026-11-22T10:60:00Z", "2026-11-22T10:42:61.5Z", "2026-00-10T10:42:00Z"] {
            #expect(KVDateFormat.parse(bad) == nil, "\(bad)")
        }
        #expect(KVDateFormat.parse("2024-02-29T23:59:59.999Z").map(KVDateFormat.format) == "2024-02-29T23:59:59.999Z")
    }

    @Test func limitsAreEnforced() throws {
        #expect(throws: CoreError.self) { try KVLimits.check(key: "", value: .int(1)) }
        #expect(throws: CoreError.self) { try KVLimits.check(key: String(repeating: "k", count: 65), value: .int(1)) }
        try KVLimits.check(key: String(repeating: "k", count: 64), value: .int(1))
        #expect(throws: CoreError.self) { try KVLimits.check(key: "big", value: .data(Data(count: 1 << 20))) }
        #expect(throws: CoreError.self) { try KVLimits.check(key: "nan", value: .double(.nan)) }
        var store: [String: KVValue] = [:]
        for i in 0..<1024 { store["k\(i)"] = .bool(true) }
        try KVLimits.check(store: store)
        store["one-more"] = .bool(true)
        do { try KVLimits.check(store: store); Issue.record("1025 keys accepted") } catch let e as CoreError { #expect(e.code == .kvTooManyKeys) }
        let half = KVValue.data(Data(count: 600_000))
        do { try KVLimits.check(store: ["a": half, "b": half]); Issue.record("1.2 MB accepted") } catch let e as CoreError { #expect(e.code == .kvStoreTooLarge) }
    }

    @Test func equalStampsAreOrderedByDevice() {
        let t = HLCTimestamp(wallMillis: 5, counter: 1)
        let lo = DeviceID(string: "00000000-0000-0000-0000-000000000001")!
        let hi = DeviceID(string: "ffffffff-0000-0000-0000-000000000001")!
        let a = KVEntry(key: "k", value: .int(1), stamp: t, device: lo)
        let b = KVEntry(key: "k", value: .int(2), stamp: t, device: hi)
        #expect(b.wins(over: a) && !a.wins(over: b))
        #expect(KVMerge.winners([a, b], over: [:]) == [b])
    }

    @Test func byteSizes() throws {
        #expect(try ByteSize.parse("5GiB") == 5 << 30)
        #expect(try ByteSize.parse("10MB") == 10_000_000)
        #expect(try ByteSize.parse("512k") == 512 << 10)
        #expect(try ByteSize.parse("1234") == 1234)
        #expect(throws: CoreError.self) { try ByteSize.parse("5 parsecs") }
        #expect(throws: CoreError.self) { try ByteSize.parse("-1") }
        #expect(throws: CoreError.self) { try ByteSize.parse("") }
    }
}

@Suite("Conflict rule")
struct ConflictRuleTests {
    let v1 = VersionID(uuid: UUID()), v2 = VersionID(uuid: UUID()), v3 = VersionID(uuid: UUID())
    let h1 = ContentHash.of(Array("one".utf8)), h2 = ContentHash.of(Array("two".utf8)), h3 = ContentHash.of(Array("three".utf8))

    @Test func decisions() {
        let item = ItemSnapshot(currentVersion: v1, currentHash: h1)
        #expect(ConflictRule.decide(existing: nil, base: nil, incoming: h1) == .create)
        #expect(ConflictRule.decide(existing: item, base: v1, incoming: h2) == .advance)
        #expect(ConflictRule.decide(existing: item, base: v2, incoming: h2) == .conflict)
        #expect(ConflictRule.decide(existing: item, base: nil, incoming: h2) == .conflict)
        // Identical content is never a conflict.
        #expect(ConflictRule.decide(existing: item, base: v2, incoming: h1) == .unchanged(v1))
        // A retried conflicting commit does not create a second conflict version.
        let withConflict = ItemSnapshot(currentVersion: v1, currentHash: h1, conflictHashes: [v2: h2])
        #expect(ConflictRule.decide(existing: withConflict, base: v3, incoming: h2) == .unchanged(v2))
        #expect(ConflictRule.decide(existing: withConflict, base: v3, incoming: h3) == .conflict)
        // A device supersedes its own current version that never finished uploading; another
        // device's unfinished version, or a finished one, is a conflict as usual.
        let me = DeviceID(uuid: UUID()), other = DeviceID(uuid: UUID())
        let unfinished = ItemSnapshot(currentVersion: v2, currentHash: h2, currentUnfinishedBy: me)
        #expect(ConflictRule.decide(existing: unfinished, base: v1, incoming: h3, device: me) == .advance)
        #expect(ConflictRule.decide(existing: unfinished, base: v1, incoming: h3, device: other) == .conflict)
        #expect(ConflictRule.decide(existing: item, base: v2, incoming: h3, device: me) == .conflict)
        // An edit against a delete wins.
        #expect(ConflictRule.decide(existing: ItemSnapshot(currentVersion: v1, currentHash: h1, isDeleted: true), base: v1, incoming: h2) == .revive)
    }

    @Test func historyKeepsTwentyOrThirtyDays() {
        let now = Date(timeIntervalSince1970: 100 * 86400)
        let history = (0..<30).map { (id: VersionID(uuid: UUID()), committed: now.addingTimeInterval(-Double($0) * 2 * 86400)) }
        let pruned = Set(HistoryPolicy.prunable(history, now: now))
        // Newest 20 always stay; of the rest, only those older than 30 days go.
        for (i, h) in history.enumerated() {
            let shouldGo = i >= 20 && Double(i) * 2 > 30
            #expect(pruned.contains(h.id) == shouldGo, "index \(i)")
        }
    }
}
