import Foundation
import UbiqCore

/// The synced key-value stores (`KeyValueStore`) on the server's database (SQLite or PostgreSQL): a type of
/// its own beside the document store, sharing its connection pool (as `SQLAccountAdmin`).
public struct SQLKeyValueStore: KeyValueStore {
    let store: SQLMetadataStore

    public init(_ store: SQLMetadataStore) { self.store = store }

    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T { try await store.read(body) }
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T { try await store.write(body) }
}

extension SQLKeyValueStore {
    static func entry(_ r: SQLRow) throws -> KVEntry {
        guard let dev = DeviceID(string: try r["device"]) else { throw StorageError(.storageFailure, "corrupt key-value row") }
        var value: KVValue?
        if let blob: Data = try r["value"] {
            do { value = try JSONDecoder().decode(KVValue.self, from: blob) } catch {
                throw StorageError(.storageFailure, "corrupt value for key '\(try r["key"] as String)'")
            }
        }
        return KVEntry(key: try r["key"], value: value, stamp: HLCTimestamp(wallMillis: try r["wall"], counter: UInt32(truncatingIfNeeded: try r["counter"] as Int64)), device: dev)
    }

    static func cursor(_ db: any SQLConnection, account: Int64, store: ContainerID) throws -> Int64 {
        try db.value("SELECT MAX(seq) FROM kv_batches WHERE account_id = ? AND store = ?", [account, store.string]) ?? 0
    }

    public func kvAll(_ ctx: AuthContext, store: ContainerID) async throws -> KVPage {
        try await read { db in
            let rows = try db.rows("SELECT * FROM kv_entries WHERE account_id = ? AND store = ? AND value IS NOT NULL ORDER BY key", [ctx.accountID, store.string])
            return KVPage(entries: try rows.map { try Self.entry($0) }, cursor: try Self.cursor(db, account: ctx.accountID, store: store), hasMore: false)
        }
    }

    /// The newest delete a store forgot and the change it was made in.
    static func horizon(_ db: any SQLConnection, account: Int64, store: ContainerID) throws -> (stamp: HLCTimestamp, seq: Int64)? {
        try db.row("SELECT wall, counter, seq FROM kv_horizon WHERE account_id = ? AND store = ?", [account, store.string])
            .map { (HLCTimestamp(wallMillis: try $0["wall"], counter: UInt32(truncatingIfNeeded: try $0["counter"] as Int64)), try $0["seq"]) }
    }

    public func kvChanges(_ ctx: AuthContext, store: ContainerID, after cursor: Int64, limit: Int) async throws -> KVPage {
        try await read { db in
            // A device that had not seen a delete the store has forgotten would keep the key for
            // ever: it reloads the whole store instead (a new device, at 0, has nothing to keep).
            if cursor > 0, let h = try Self.horizon(db, account: ctx.accountID, store: store), cursor < h.seq {
                throw StorageError(.kvCursorExpired, "the settings changed too much since this device last looked (change \(cursor)); it reloads them all")
            }
            let rows = try db.rows("SELECT * FROM kv_entries WHERE account_id = ? AND store = ? AND seq > ? ORDER BY seq, key", [ctx.accountID, store.string, cursor])
            // Whole sets only: stop at a set boundary once the page is full.
            var out: [KVEntry] = []
            var last = cursor
            var hasMore = false
            for r in rows {
                let seq: Int64 = try r["seq"]
                if out.count >= limit && seq != last { hasMore = true; break }
                out.append(try Self.entry(r))
                last = seq
            }
            if !hasMore { last = max(last, try Self.cursor(db, account: ctx.accountID, store: store)) }
            return KVPage(entries: out, cursor: last, hasMore: hasMore)
        }
    }

    public func kvSet(_ ctx: AuthContext, store: ContainerID, entries: [KVEntry], now: Date) async throws -> (applied: [String], cursor: Int64) {
        let nowMillis = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        for e in entries {
            do {
                try Self.mapCore {
                    try KVLimits.check(key: e.key, value: e.value)
                    try KVLimits.check(stamp: e.stamp, nowMillis: nowMillis)
                }
            } catch let refused as StorageError where refused.code == .kvClockAhead {
                // A device's clock carried past a stamp the store holds from before stamps were
                // checked: the store's stamps are set right first, so the device's next pull
                // brings them and its writes stamped again are taken.
                try await self.store.write(account: ctx.accountID) { db in try Self.repairFarAhead(db, account: ctx.accountID, store: store, nowMillis: nowMillis, now: now) }
                throw refused
            }
        }
        return try await self.store.write(account: ctx.accountID) { db in
            try Self.repairFarAhead(db, account: ctx.accountID, store: store, nowMillis: nowMillis, now: now)
            let rows = try db.rows("SELECT * FROM kv_entries WHERE account_id = ? AND store = ?", [ctx.accountID, store.string])
            var current: [String: KVEntry] = [:]
            for r in rows { let e = try Self.entry(r); current[e.key] = e }
            let horizon = try Self.horizon(db, account: ctx.accountID, store: store)
            let winners = KVMerge.winners(entries, over: current, horizon: horizon?.stamp)
            guard !winners.isEmpty else { return ([], try Self.cursor(db, account: ctx.accountID, store: store)) }
            var result: [String: KVValue] = current.compactMapValues(\.value)
            for w in winners { result[w.key] = w.value }
            try Self.mapCore { try KVLimits.check(store: result) }
            if rows.isEmpty, try Self.cursor(db, account: ctx.accountID, store: store) == 0 { try Self.checkStoreCount(db, account: ctx.accountID) }
            let seq = try Self.newBatch(db, account: ctx.accountID, store: store, now: now)
            try Self.write(db, account: ctx.accountID, store: store, winners, seq: seq)
            try Self.checkAccountRoom(db, account: ctx.accountID)  // as stored, this write included (a refusal rolls it back)
            for w in winners { current[w.key] = w }
            // Deletes past the limit are forgotten, the oldest first; the horizon keeps them winning.
            var tombstoneSeq: [String: Int64] = [:]  // the change each delete was made in
            for r in rows where (try r["value"] as Data?) == nil { tombstoneSeq[try r["key"]] = try r["seq"] }
            for w in winners { tombstoneSeq[w.key] = seq }
            let (forget, newest) = KVMerge.forgetting(current.values.filter { $0.value == nil })
            if let newest {
                let forgottenSeq = forget.compactMap { tombstoneSeq[$0] }.max() ?? seq
                for k in forget {
                    try db.execute("DELETE FROM kv_entries WHERE account_id = ? AND store = ? AND key = ?", [ctx.accountID, store.string, k])
                    try db.execute("DELETE FROM kv_history WHERE account_id = ? AND store = ? AND key = ?", [ctx.accountID, store.string, k])
                }
                let stamp = max(newest, horizon?.stamp ?? .zero)
                try db.execute("""
                    INSERT INTO kv_horizon (account_id, store, wall, counter, seq) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (account_id, store) DO UPDATE SET wall = excluded.wall, counter = excluded.counter, seq = \(db.dialect.greatest)(kv_horizon.seq, excluded.seq)
                    """, [ctx.accountID, store.string, stamp.wallMillis, Int64(stamp.counter), forgottenSeq])
            }
            try Self.trimHistory(db, account: ctx.accountID, store: store)
            return (winners.map(\.key), seq)
        }
    }

    /// Settings stores one account may keep (each up to `KVLimits.maxStoreBytes` of values and
    /// its history).
    public static let maxStoresPerAccount = 64

    /// A new change number for the store; the store's older batch rows are dropped (only the
    /// newest is the store's cursor — #45 row 2: they were never pruned, a row per write).
    static func newBatch(_ db: any SQLConnection, account: Int64, store: ContainerID, now: Date) throws -> Int64 {
        let seq = try db.insert("INSERT INTO kv_batches (account_id, store, created) VALUES (?, ?, ?)", [account, store.string, now.timeIntervalSince1970],
                                returning: "seq")
        try db.execute("DELETE FROM kv_batches WHERE account_id = ? AND store = ? AND seq < ?", [account, store.string, seq])
        return seq
    }

    /// A new store for the account: at most `maxStoresPerAccount` (#45 row 2).
    static func checkStoreCount(_ db: any SQLConnection, account: Int64) throws {
        let stores: Int64 = try db.value("SELECT COUNT(DISTINCT store) FROM kv_batches WHERE account_id = ?", [account]) ?? 0
        guard stores < maxStoresPerAccount else {
            throw StorageError(.storageFull, "storage full: the account keeps \(stores) settings stores, the most it may")
        }
    }

    /// Bytes of settings values (as stored) one account may hold across its stores, and never
    /// more than its quota.
    public static let maxSettingsBytesPerAccount: Int64 = 16 << 20

    /// What settings cost counts against the account (#45 row 2: an account with a 1 MiB quota
    /// kept 12 MB of settings): every store's values, as stored, within the smaller of the quota
    /// and `maxSettingsBytesPerAccount` — a budget of their own, as the seeds' key-value store
    /// has, so an account whose files fill its quota still syncs its settings. `storage_full`
    /// otherwise (a device reports it to programs as `quotaViolationChange`).
    static func checkAccountRoom(_ db: any SQLConnection, account: Int64) throws {
        let settings: Int64 = try db.value("SELECT CAST(COALESCE(SUM(LENGTH(value)), 0) AS BIGINT) FROM kv_entries WHERE account_id = ?", [account]) ?? 0
        guard let quota: Int64 = try db.value("SELECT quota FROM accounts WHERE id = ?", [account]) else { return }
        let limit = min(quota, maxSettingsBytesPerAccount)
        if settings > limit {
            throw StorageError(.storageFull, "storage full: the account's settings would take \(ByteSize.format(settings)), past the \(ByteSize.format(limit)) they may hold")
        }
    }

    /// Stamps the store holds further ahead of the server's clock than a write may be (stored
    /// before writes were checked, #45 row 10): each is set to the server's clock in a change of
    /// its own, so every device pulls it. Such a stamp won over every later write, and a device
    /// that had seen it stamped its own writes past the limit and they waited for ever.
    static func repairFarAhead(_ db: any SQLConnection, account: Int64, store: ContainerID, nowMillis: Int64, now: Date) throws {
        let (limit, overflow) = nowMillis.addingReportingOverflow(KVLimits.maxStampAheadMillis)
        guard !overflow else { return }
        let far: Int64 = try (db.values("SELECT COUNT(*) FROM kv_entries WHERE account_id = ? AND store = ? AND wall > ?", [account, store.string, limit]) as [Int64]).first ?? 0
        if far > 0 {
            let seq = try newBatch(db, account: account, store: store, now: now)
            try db.execute("UPDATE kv_entries SET wall = ?, counter = 0, seq = ? WHERE account_id = ? AND store = ? AND wall > ?",
                           [nowMillis, seq, account, store.string, limit])
        }
        try db.execute("UPDATE kv_horizon SET wall = ?, counter = 0 WHERE account_id = ? AND store = ? AND wall > ?", [nowMillis, account, store.string, limit])
    }

    public func kvHistory(_ ctx: AuthContext, store: ContainerID, key: String) async throws -> [KVEntry] {
        try Self.mapCore { try KVLimits.check(key: key, value: nil) }
        return try await read { db in
            // One answer carries at most `KVLimits.maxEntryBytes` × 2 of values (a key of big
            // values would otherwise send ten of them each time its history is looked at).
            let rows = try db.rows("SELECT * FROM kv_history WHERE account_id = ? AND store = ? AND key = ? ORDER BY seq DESC", [ctx.accountID, store.string, key])
            var out: [KVEntry] = []
            var bytes = 0
            for r in rows {
                bytes += (try r["value"] as Data?)?.count ?? 0
                if !out.isEmpty && bytes > 2 * KVLimits.maxEntryBytes { break }
                out.append(try Self.entry(r))
            }
            return out
        }
    }

    /// Writes the winning entries of one change `seq` as the keys' current values and into their
    /// histories, each of which keeps its last `KVLimits.historyPerKey`. A few statements for the
    /// whole set (rows of up to `SQLBatch.rows`), not three per key: a set of 1,024 keys was
    /// 3,072 round trips to PostgreSQL, past a client's patience on a busy server.
    static func write(_ db: any SQLConnection, account: Int64, store: ContainerID, _ winners: [KVEntry], seq: Int64) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let rows: [[any SQLArgument]] = try winners.map { w in
            [account, store.string, w.key, try w.value.map { try encoder.encode($0) }, w.stamp.wallMillis, Int64(w.stamp.counter), w.device.description, seq]
        }
        try SQLBatch.each(rows.count) { range in
            let args = rows[range].flatMap { $0 }
            let tuples = SQLBatch.tuples(8, range.count)
            try db.execute("""
                INSERT INTO kv_entries (account_id, store, key, value, wall, counter, device, seq) VALUES \(tuples)
                ON CONFLICT (account_id, store, key) DO UPDATE SET value = excluded.value, wall = excluded.wall,
                    counter = excluded.counter, device = excluded.device, seq = excluded.seq
                """, args)
            try db.execute("INSERT INTO kv_history (account_id, store, key, value, wall, counter, device, seq) VALUES \(tuples)", args)
        }
        // Each key's history beyond its newest `historyPerKey` writes (only keys just written can
        // have grown past it).
        try db.execute("""
            DELETE FROM kv_history WHERE account_id = ? AND store = ? AND (key, seq) IN (
                SELECT key, seq FROM (
                    SELECT key, seq, ROW_NUMBER() OVER (PARTITION BY key ORDER BY seq DESC) AS n
                    FROM kv_history WHERE account_id = ? AND store = ?
                ) AS ranked WHERE n > ?)
            """, [account, store.string, account, store.string, KVLimits.historyPerKey])
    }

    /// Drops a store's oldest history until its values fit `KVLimits.maxHistoryBytes`, never a
    /// key's newest write (that is its current value, or its delete: what a live store holds
    /// anyway, at most `KVLimits.maxStoreBytes` of values in all).
    static func trimHistory(_ db: any SQLConnection, account: Int64, store: ContainerID) throws {
        let total: Int64 = try db.value("SELECT coalesce(sum(length(value)), 0) FROM kv_history WHERE account_id = ? AND store = ?", [account, store.string]) ?? 0
        guard total > KVLimits.maxHistoryBytes else { return }
        var over = total - Int64(KVLimits.maxHistoryBytes)
        let oldest = try db.rows("""
            SELECT key, seq, coalesce(length(value), 0) AS n FROM kv_history h WHERE account_id = ? AND store = ?
                AND seq < (SELECT max(seq) FROM kv_history WHERE account_id = h.account_id AND store = h.store AND key = h.key)
            ORDER BY seq
            """, [account, store.string])
        var drop: [(String, Int64)] = []
        for r in oldest where over > 0 {
            drop.append((try r["key"], try r["seq"]))
            over -= try r["n"] as Int64
        }
        for (k, s) in drop {
            try db.execute("DELETE FROM kv_history WHERE account_id = ? AND store = ? AND key = ? AND seq = ?", [account, store.string, k, s])
        }
    }

    static func mapCore<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as CoreError { throw StorageError(e.code, e.message) }
    }
}
