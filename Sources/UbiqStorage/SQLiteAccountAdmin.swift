import Foundation
import GRDB
import UbiqCore

/// The administrator's queries (`AccountAdminStore`) on an embedded server's database: a type
/// of its own beside the store the routes use, sharing its connection pool.
public struct SQLiteAccountAdmin: AccountAdminStore {
    let store: SQLiteMetadataStore

    public init(_ store: SQLiteMetadataStore) { self.store = store }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T { try await store.read(body) }
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T { try await store.write(body) }

    public func accounts() async throws -> [AccountSummary] {
        try await read { db in
            try Row.fetchAll(db, sql: """
                SELECT a.name, a.quota, a.used, a.created,
                       (SELECT COUNT(DISTINCT t.device_id) FROM tokens t WHERE t.account_id = a.id) AS devices
                FROM accounts a ORDER BY a.name
                """).map {
                AccountSummary(name: $0["name"], quota: $0["quota"], used: $0["used"], devices: $0["devices"],
                               created: Date(timeIntervalSince1970: $0["created"]))
            }
        }
    }

    public func setPassword(name: String, password: PasswordRecord, signOut: Bool) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "UPDATE accounts SET salt = ?, iterations = ?, derived = ? WHERE name = ?",
                           arguments: [Data(password.salt), password.iterations, Data(password.derived), name])
            guard db.changesCount > 0 else { return false }
            if signOut { try db.execute(sql: "DELETE FROM tokens WHERE account_id = (SELECT id FROM accounts WHERE name = ?)", arguments: [name]) }
            return true
        }
    }

    public func setQuota(name: String, quota: Int64) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "UPDATE accounts SET quota = ? WHERE name = ?", arguments: [quota, name])
            return db.changesCount > 0
        }
    }

    public func deleteAccount(name: String) async throws -> Bool {
        try await write { db in
            // Everything of the account references it (ON DELETE CASCADE). Chunk bytes stay in
            // the chunk store, as after a purge (other accounts may hold them).
            try db.execute(sql: "DELETE FROM accounts WHERE name = ?", arguments: [name])
            return db.changesCount > 0
        }
    }

    public func devices(accountID: Int64) async throws -> [DeviceRecord] {
        try await read { db in
            try Row.fetchAll(db, sql: """
                SELECT d.id, d.name, d.created, d.last_seen,
                       EXISTS (SELECT 1 FROM tokens t WHERE t.account_id = d.account_id AND t.device_id = d.id) AS signed_in
                FROM devices d WHERE d.account_id = ? ORDER BY d.last_seen DESC, d.name
                """, arguments: [accountID]).compactMap { r in
                guard let id = DeviceID(string: r["id"]) else { return nil }
                return DeviceRecord(id: id, name: r["name"], created: Date(timeIntervalSince1970: r["created"]),
                                    lastSeen: Date(timeIntervalSince1970: r["last_seen"]), signedIn: r["signed_in"])
            }
        }
    }
}
