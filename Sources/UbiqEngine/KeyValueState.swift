import Foundation
import GRDB
import UbiqCore
import UbiqProtocol

/// The key-value store's local state in one SQLite file: every key's winning entry (tombstones
/// included), which of them are this device's writes not yet acknowledged by the server, the
/// change-feed cursor, the hybrid logical clock and the account the cache belongs to.
final class KeyValueState: Sendable {
    let pool: DatabasePool

    init(path: String) throws {
        var config = Configuration()
        config.busyMode = .timeout(10)
        do {
            pool = try DatabasePool(path: path, configuration: config)
            var m = DatabaseMigrator()
            m.registerMigration("v1-kv") { db in
                try db.execute(sql: """
                    CREATE TABLE entries (key TEXT PRIMARY KEY, value TEXT, wall INTEGER NOT NULL, counter INTEGER NOT NULL,
                        device TEXT NOT NULL, pending INTEGER NOT NULL DEFAULT 0);
                    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                    """)
            }
            try m.migrate(pool)
        } catch {
            throw EngineError(.storageFailure, "cannot open the key-value cache \(path): \(error)")
        }
    }

    struct Loaded {
        var entries: [String: KVEntry] = [:]
        var pending: Set<String> = []
        var meta: [String: String] = [:]
    }

    func load() throws -> Loaded {
        do {
            return try pool.read { db in
                var out = Loaded()
                for r in try Row.fetchAll(db, sql: "SELECT * FROM entries") {
                    guard let device = DeviceID(string: r["device"]) else { continue }
                    let key: String = r["key"]
                    let value = try (r["value"] as String?).map { try WireCoding.decode(KVValue.self, from: Data($0.utf8)) }
                    out.entries[key] = KVEntry(key: key, value: value, stamp: HLCTimestamp(wallMillis: r["wall"], counter: UInt32(r["counter"] as Int64)), device: device)
                    if (r["pending"] as Int64) != 0 { out.pending.insert(key) }
                }
                for r in try Row.fetchAll(db, sql: "SELECT key, value FROM meta") { out.meta[r["key"]] = r["value"] }
                return out
            }
        } catch {
            throw EngineError(.storageFailure, "cannot read the key-value cache: \(error)")
        }
    }

    /// Writes changed entries, the full pending set and meta values in one transaction.
    func save(_ entries: [KVEntry], pending: Set<String>, meta: [String: String], wipe: Bool = false) throws {
        do {
            try pool.write { db in
                if wipe { try db.execute(sql: "DELETE FROM entries; DELETE FROM meta;") }
                for e in entries {
                    let json = try e.value.map { String(decoding: try WireCoding.encode($0), as: UTF8.self) }
                    try db.execute(sql: "INSERT OR REPLACE INTO entries (key, value, wall, counter, device, pending) VALUES (?, ?, ?, ?, ?, 0)",
                                   arguments: [e.key, json, e.stamp.wallMillis, Int64(e.stamp.counter), e.device.description])
                }
                try db.execute(sql: "UPDATE entries SET pending = 0 WHERE pending != 0")
                for k in pending { try db.execute(sql: "UPDATE entries SET pending = 1 WHERE key = ?", arguments: [k]) }
                for (k, v) in meta { try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", arguments: [k, v]) }
            }
        } catch {
            throw EngineError(.storageFailure, "cannot write the key-value cache: \(error)")
        }
    }
}
