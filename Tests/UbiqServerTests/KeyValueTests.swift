import Foundation
import GRDB
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqTesting

@Suite("Key-value store")
struct KeyValueTests {
    func entry(_ key: String, _ value: KVValue?, wall: Int64, counter: UInt32 = 0, device: DeviceID) -> KVEntry {
        KVEntry(key: key, value: value, stamp: HLCTimestamp(wallMillis: wall, counter: counter), device: device)
    }

    @Test(arguments: DatabaseKind.available) func setReadAndChangesSinceCursor(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, lid) = try await server.device("alice", name: "laptop")
            let (phone, _) = try await server.device("alice", name: "phone")
            let start = try await phone.kvAll(notes)
            #expect(start.entries.isEmpty)
            let values: [String: KVValue] = ["s": .string("héllo"), "i": .int(42), "d": .double(2.5), "b": .bool(true),
                                             "t": .date(Date(timeIntervalSince1970: 1_800_000_000)), "x": .data(Data([1, 2, 3])),
                                             "a": .array([.int(1), .string("two")]), "m": .dictionary(["k": .bool(false)])]
            let set = try await laptop.kvSet(notes, values.map { entry($0.key, $0.value, wall: 100, device: lid) })
            #expect(Set(set.applied) == Set(values.keys))
            let all = try await phone.kvAll(notes)
            #expect(Dictionary(uniqueKeysWithValues: all.entries.map { ($0.key, $0.value!) }) == values)
            #expect(all.entries.allSatisfy { $0.device == lid })
            // Remove one key: the change feed carries a tombstone.
            let rm = try await laptop.kvSet(notes, [entry("s", nil, wall: 101, device: lid)])
            let changes = try await phone.kvChanges(notes, after: all.cursor)
            #expect(changes.entries.map(\.key) == ["s"] && changes.entries[0].value == nil && changes.cursor == rm.cursor)
            #expect(try await phone.kvAll(notes).entries.count == values.count - 1)
        }
    }

    /// Deleted keys count: past `KVLimits.maxTombstones` the oldest deletes are forgotten (they
    /// piled up uncounted: 20,000 against a 1,024-key limit, every write then reading them all),
    /// a forgotten delete still beats an older write, and a device that had not seen it is told
    /// to reload instead of keeping the key for ever.
    @Test(arguments: DatabaseKind.available) func deletedKeysAreBoundedAndAForgottenDeleteStillWins(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, lid) = try await server.device("alice", name: "laptop")
            let (phone, pid) = try await server.device("alice", name: "phone")
            _ = try await laptop.kvSet(notes, [entry("keep", .int(1), wall: 100, device: lid)])
            let seen = try await phone.kvAll(notes)
            _ = try await laptop.kvSet(notes, [entry("keep", nil, wall: 150, device: lid)])
            var wall: Int64 = 200
            for round in 0..<11 {
                let keys = (0..<100).map { "k\(round)-\($0)" }
                _ = try await laptop.kvSet(notes, keys.map { entry($0, .int(1), wall: wall, device: lid) })
                _ = try await laptop.kvSet(notes, keys.map { entry($0, nil, wall: wall + 1, device: lid) })
                wall += 10
            }
            var tombstones: [KVEntry] = []
            var cursor: Int64 = 0
            while true {
                let page = try await phone.kvChanges(notes, after: cursor)
                tombstones += page.entries.filter { $0.value == nil }
                cursor = page.cursor
                if !page.hasMore { break }
            }
            #expect(tombstones.count == KVLimits.maxTombstones, "\(tombstones.count) deletes kept")
            // 1,101 deletes: "keep" and the 76 first of round 0 are forgotten, the oldest first.
            #expect(!tombstones.contains { $0.key == "keep" } && tombstones.filter { $0.key.hasPrefix("k0-") }.count == 24)
            // A write older than a forgotten delete loses to it; a newer one wins.
            let forgotten = Set((0..<100).map { "k0-\($0)" }).subtracting(tombstones.map(\.key)).sorted()
            let stale = try await phone.kvSet(notes, [entry("keep", .int(2), wall: 120, device: pid), entry(forgotten[0], .int(2), wall: 190, device: pid)])
            #expect(stale.applied.isEmpty)
            let fresh = try await phone.kvSet(notes, [entry("keep", .int(3), wall: 5_000, device: pid)])
            #expect(fresh.applied == ["keep"])
            // The phone had "keep" live and never saw its delete: it must reload.
            await expectCode(.kvCursorExpired) { _ = try await phone.kvChanges(notes, after: seen.cursor) }
            #expect(try await phone.kvAll(notes).entries.map(\.key) == ["keep"])
        }
    }

    @Test(arguments: DatabaseKind.available) func lastWriterWinsByHLCThenDevice(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, lid) = try await server.device("alice", name: "laptop")
            let (phone, pid) = try await server.device("alice", name: "phone")
            _ = try await laptop.kvSet(notes, [entry("k", .string("laptop@200"), wall: 200, device: lid)])
            // An older stamp loses even though it arrives later.
            let late = try await phone.kvSet(notes, [entry("k", .string("phone@150"), wall: 150, device: pid)])
            #expect(late.applied.isEmpty)
            #expect(try await laptop.kvAll(notes).entries.first?.value == .string("laptop@200"))
            // A causally later write (higher counter at the same wall time) wins.
            _ = try await phone.kvSet(notes, [entry("k", .string("phone@200.1"), wall: 200, counter: 1, device: pid)])
            #expect(try await laptop.kvAll(notes).entries.first?.value == .string("phone@200.1"))
            // Equal stamps: the greater device ID wins, whichever order they arrive in.
            let (hi, lo) = lid > pid ? (laptop, phone) : (phone, laptop)
            let (hiID, loID) = lid > pid ? (lid, pid) : (pid, lid)
            _ = try await hi.kvSet(notes, [entry("tie", .string("hi"), wall: 300, device: hiID)])
            let r = try await lo.kvSet(notes, [entry("tie", .string("lo"), wall: 300, device: loID)])
            #expect(r.applied.isEmpty)
            #expect(try await lo.kvAll(notes).entries.first { $0.key == "tie" }?.value == .string("hi"))
            // A device cannot write under another device's ID.
            await expectCode(.forbidden) { _ = try await laptop.kvSet(notes, [entry("k", .int(1), wall: 999, device: pid)]) }
        }
    }

    @Test(arguments: DatabaseKind.available) func limitsAreEnforcedAndStoreNothing(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (c, id) = try await server.device("alice")
            await expectCode(.kvKeyInvalid) { _ = try await c.kvSet(notes, [entry(String(repeating: "k", count: 65), .int(1), wall: 1, device: id)]) }
            await expectCode(.kvKeyInvalid) { _ = try await c.kvSet(notes, [entry("", .int(1), wall: 1, device: id)]) }
            await expectCode(.kvValueTooLarge) { _ = try await c.kvSet(notes, [entry("big", .data(Data(count: 1 << 20)), wall: 1, device: id)]) }
            // 1024 keys fit; the 1025th is refused with nothing stored.
            let many = (0..<1024).map { entry("k\($0)", .bool(true), wall: 1, device: id) }
            _ = try await c.kvSet(notes, many)
            await expectCode(.kvTooManyKeys) {
                _ = try await c.kvSet(notes, [entry("k0", .bool(false), wall: 2, device: id), entry("extra", .bool(true), wall: 2, device: id)])
            }
            let all = try await c.kvAll(notes)
            #expect(all.entries.count == 1024 && all.entries.first { $0.key == "k0" }?.value == .bool(true))
            // Total size: two values of 600 KB cannot coexist; the second set fails atomically.
            let store2 = try ContainerID(validating: "other.store")
            _ = try await c.kvSet(store2, [entry("a", .data(Data(count: 600_000)), wall: 1, device: id)])
            await expectCode(.kvStoreTooLarge) {
                _ = try await c.kvSet(store2, [entry("b", .data(Data(count: 600_000)), wall: 2, device: id), entry("c", .int(1), wall: 2, device: id)])
            }
            #expect(try await c.kvAll(store2).entries.map(\.key) == ["a"])
        }
    }

    /// #45 row 2: settings were not counted — an account with a 1 MiB quota kept six stores of
    /// 1 MB (and their history), and a row per write in `kv_batches` for ever. Now every store's
    /// values count against a budget of the smaller of the quota and 16 MiB, an account keeps at
    /// most 64 stores, and a store keeps one batch row.
    @Test(arguments: DatabaseKind.available) func settingsCountAgainstTheQuotaAndStoresAreCapped(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            try await server.user("tight", quota: 1 << 20)
            let (t, tid) = try await server.device("tight")
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let big = KVValue.data(Data(repeating: 7, count: 200_000))  // about 267 KB as stored
            var taken = 0
            for i in 0..<6 {
                let store = try ContainerID(validating: "TEAM.settings.s\(i)")
                do {
                    _ = try await t.kvSet(store, [entry("blob", big, wall: now, device: tid)])
                    taken += 1
                } catch let e as ClientError {
                    #expect(e.code == .storageFull && e.message.contains("settings would take"), "\(e)")
                }
            }
            #expect(taken == 3, "three stores of 267 KB (as stored) fit in 1 MiB, the fourth does not (took \(taken))")
            // Alice (1 GiB): 64 stores, the 65th refused; a store written again and again keeps one batch row.
            let (a, aid) = try await server.device("alice")
            for i in 0..<64 { _ = try await a.kvSet(try ContainerID(validating: "TEAM.many.s\(i)"), [entry("k", .int(Int64(i)), wall: now, device: aid)]) }
            await expectCode(.storageFull) { _ = try await a.kvSet(try ContainerID(validating: "TEAM.many.s64"), [entry("k", .int(64), wall: now, device: aid)]) }
            for n in 1...50 { _ = try await a.kvSet(try ContainerID(validating: "TEAM.many.s0"), [entry("k", .int(Int64(n)), wall: now + Int64(n), device: aid)]) }
            let page = try await a.kvChanges(try ContainerID(validating: "TEAM.many.s0"), after: 0)
            #expect(page.entries.map(\.value) == [.int(50)], "the store still reads right after its batches were pruned")
            if case .sqlite = server.database {
                let queue = try DatabaseQueue(path: server.directory.url.appendingPathComponent("metadata.sqlite").path)
                let rows = try await queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM kv_batches") ?? -1 }
                #expect(rows <= 3 + 64, "one batch row per store: \(rows)")
            }
        }
    }

    /// #45 row 10: stamps stored before the far-ahead check (here: while the server's own clock
    /// was ten years ahead) were never set right — each won over every later write, and a device
    /// that had seen one stamped its writes past the limit, refused for ever. They are repaired:
    /// a device with a right clock wins again, and the repaired stamp is a change every device pulls.
    @Test(arguments: DatabaseKind.available) func stampsStoredFarAheadAreSetRight(_ db: DatabaseKind) async throws {
        let clock = HandClock()
        try await withServer(db, clock: { clock.now }) { server in
            let (c, id) = try await server.device("alice")
            let real = Int64(Date().timeIntervalSince1970 * 1000)
            clock.advance(days: 3650)
            let far = real + 3650 * 86_400_000
            _ = try await c.kvSet(notes, [entry("theme", .string("from the future"), wall: far, device: id),
                                          entry("size", .int(12), wall: far, device: id)])
            let before = try await c.kvAll(notes).cursor
            clock.advance(days: -3650)
            // A device that saw the stamp writes past it: refused, and the store is set right.
            await expectCode(.kvClockAhead) { _ = try await c.kvSet(notes, [entry("size", .int(14), wall: far + 1, device: id)]) }
            let changed = try await c.kvChanges(notes, after: before)
            #expect(Set(changed.entries.map(\.key)) == ["theme", "size"], "the repaired stamps are a change to pull")
            #expect(changed.entries.allSatisfy { $0.stamp.wallMillis < real + 86_400_000 }, "\(changed.entries.map(\.stamp))")
            // A write with a right clock wins over what was stamped ten years ahead.
            let set = try await c.kvSet(notes, [entry("theme", .string("now"), wall: Int64(Date().timeIntervalSince1970 * 1000) + 1000, device: id)])
            #expect(set.applied == ["theme"])
            #expect(try await c.kvAll(notes).entries.first { $0.key == "theme" }?.value == .string("now"))
        }
    }

    /// #23 row 8: a write stamped at the end of the clock's range was stored and then won over
    /// every later write (and crashed every device's clock). Stamps more than a day ahead of
    /// the server's clock are refused with nothing stored; hours ahead are still fine (§4.3).
    @Test(arguments: DatabaseKind.available) func aStampFarAheadOfTheServersClockIsRefused(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (c, id) = try await server.device("alice")
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            await expectCode(.kvClockAhead) { _ = try await c.kvSet(notes, [entry("k", .int(1), wall: .max, counter: .max, device: id)]) }
            await expectCode(.kvClockAhead) { _ = try await c.kvSet(notes, [entry("k", .int(2), wall: now + 25 * 3_600_000, device: id)]) }
            #expect(try await c.kvAll(notes).entries.isEmpty, "nothing was stored")
            let hoursAhead = try await c.kvSet(notes, [entry("k", .int(3), wall: now + 5 * 3_600_000, device: id)])
            #expect(hoursAhead.applied == ["k"])
            #expect(try await c.kvAll(notes).entries.map(\.value) == [.int(3)])
        }
    }

    @Test(arguments: DatabaseKind.available) func multiKeySetsArriveWhole(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, lid) = try await server.device("alice", name: "laptop")
            let (phone, _) = try await server.device("alice", name: "phone")
            for round in 0..<5 {
                _ = try await laptop.kvSet(notes, (0..<7).map { entry("set\(round).k\($0)", .int(Int64(round)), wall: Int64(10 + round), device: lid) })
            }
            var cursor: Int64 = 0
            var batches: [[String]] = []
            while true {
                let page = try await phone.kvChanges(notes, after: cursor, limit: 3)
                batches.append(page.entries.map(\.key))
                cursor = page.cursor
                if !page.hasMore { break }
            }
            // Pages end on set boundaries: each page holds whole sets of 7.
            #expect(batches.allSatisfy { $0.count % 7 == 0 })
            #expect(batches.flatMap { $0 }.count == 35)
        }
    }
}

extension KeyValueTests {
    /// A key's history (`i` in Settings, `ubiq kv history`): its last `KVLimits.historyPerKey`
    /// writes, newest first, with the writing device; a delete is kept as a write without a
    /// value. Bounded twice: per key, and by the bytes a store's history holds in all (the
    /// oldest writes go first). Another account's history is not reachable.
    @Test(arguments: DatabaseKind.available) func aKeysHistoryKeepsItsLastWritesNewestFirstAndStaysBounded(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, lid) = try await server.device("alice", name: "laptop")
            let (phone, pid) = try await server.device("alice", name: "phone")
            for n in 1...12 {
                let (client, dev) = n % 2 == 0 ? (phone, pid) : (laptop, lid)
                _ = try await client.kvSet(notes, [entry("theme", .string("t\(n)"), wall: Int64(100 + n), device: dev)])
            }
            _ = try await phone.kvSet(notes, [entry("theme", nil, wall: 200, device: pid)])
            let h = try await laptop.kvHistory(notes, key: "theme")
            #expect(h.count == KVLimits.historyPerKey)
            #expect(h.first?.value == nil && h.first?.device == pid, "the delete is the newest write")
            #expect(h.dropFirst().map(\.value) == (4...12).reversed().map { .string("t\($0)") }, "\(h.map(\.value))")
            #expect(h[1].device == pid && h[2].device == lid, "each write with its device")
            // A write that loses (older stamp) is not history.
            _ = try await laptop.kvSet(notes, [entry("theme", .string("stale"), wall: 50, device: lid)])
            #expect(try await laptop.kvHistory(notes, key: "theme").count == KVLimits.historyPerKey)
            #expect(try await laptop.kvHistory(notes, key: "theme").contains { $0.value == .string("stale") } == false)
            #expect(try await laptop.kvHistory(notes, key: "never").isEmpty)
            // A key with spaces, `&`, `=` and non-ASCII letters travels in the query intact.
            _ = try await laptop.kvSet(notes, [entry("dark mode & é=1", .bool(true), wall: 250, device: lid)])
            #expect(try await phone.kvHistory(notes, key: "dark mode & é=1").map(\.value) == [.bool(true)])
            // Bounded in bytes: 12 keys each written with ~700 KB (one at a time, the store's
            // own limit allows no more), then made small: the history keeps at most 4 MiB.
            let big = String(repeating: "x", count: 700_000)
            for k in 0..<12 {
                _ = try await laptop.kvSet(notes, [entry("big\(k)", .string(big), wall: Int64(300 + 2 * k), device: lid)])
                _ = try await laptop.kvSet(notes, [entry("big\(k)", .string("small"), wall: Int64(301 + 2 * k), device: lid)])
            }
            var bytes = 0
            var kept = 0
            for k in 0..<12 {
                let hk = try await laptop.kvHistory(notes, key: "big\(k)")
                bytes += hk.compactMap { $0.value?.byteCount }.reduce(0, +)
                kept += hk.count
                #expect(hk.first?.value == .string("small"), "the newest write is always kept")
            }
            #expect(bytes <= KVLimits.maxHistoryBytes + 12 * 5 && bytes > KVLimits.maxHistoryBytes / 2, "\(bytes) bytes of history")
            #expect(kept < 24, "the oldest big writes went")
            // Another account sees nothing of it; a request without a key is refused.
            try await server.user("mallory")
            let (mallory, _) = try await server.device("mallory", name: "m")
            #expect(try await mallory.kvHistory(notes, key: "theme").isEmpty)
            let raw = try await laptop.raw(.GET, "/v1/kv/\(notes.string)/history", body: nil)
            #expect(raw.status == 400)
        }
    }
}
