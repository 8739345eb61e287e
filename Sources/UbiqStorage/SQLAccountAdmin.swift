import Foundation
import UbiqCore

/// The administrator's queries (`AccountAdminStore`) on the server's database (SQLite or PostgreSQL): a type
/// of its own beside the store the routes use, sharing its connection pool.
public struct SQLAccountAdmin: AccountAdminStore {
    let store: SQLMetadataStore

    public init(_ store: SQLMetadataStore) { self.store = store }

    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T { try await store.read(body) }
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T { try await store.write(body) }

    public func accounts() async throws -> [AccountSummary] {
        try await read { db in
            try db.rows("""
                SELECT a.name, a.quota, a.used, a.created,
                       (SELECT COUNT(DISTINCT t.device_id) FROM tokens t WHERE t.account_id = a.id) AS devices
                FROM accounts a ORDER BY a.name
                """).map {
                AccountSummary(name: try $0["name"], quota: try $0["quota"], used: try $0["used"], devices: try $0["devices"],
                               created: Date(timeIntervalSince1970: try $0["created"]))
            }
        }
    }

    public func setPassword(name: String, password: PasswordRecord, signOut: Bool) async throws -> Bool {
        try await write { db in
            guard try db.execute("UPDATE accounts SET salt = ?, iterations = ?, derived = ? WHERE name = ?",
                                 [Data(password.salt), password.iterations, Data(password.derived), name]) > 0 else { return false }
            if signOut { try db.execute("DELETE FROM tokens WHERE account_id = (SELECT id FROM accounts WHERE name = ?)", [name]) }
            return true
        }
    }

    public func setQuota(name: String, quota: Int64) async throws -> Bool {
        try await write { db in
            try db.execute("UPDATE accounts SET quota = ? WHERE name = ?", [quota, name]) > 0
        }
    }

    public func deleteAccount(name: String) async throws -> Bool {
        try await write { db in
            // Everything of the account references it (ON DELETE CASCADE). Chunk bytes stay in
            // the chunk store, as after a purge (other accounts may hold them).
            return try db.execute("DELETE FROM accounts WHERE name = ?", [name]) > 0
        }
    }

    public func devices(accountID: Int64) async throws -> [DeviceRecord] {
        try await read { db in
            try db.rows("""
                SELECT d.id, d.name, d.created, d.last_seen,
                       EXISTS (SELECT 1 FROM tokens t WHERE t.account_id = d.account_id AND t.device_id = d.id) AS signed_in
                FROM devices d WHERE d.account_id = ? ORDER BY d.last_seen DESC, d.name
                """, [accountID]).compactMap { r in
                guard let id = DeviceID(string: try r["id"]) else { return nil }
                return DeviceRecord(id: id, name: try r["name"], created: Date(timeIntervalSince1970: try r["created"]),
                                    lastSeen: Date(timeIntervalSince1970: try r["last_seen"]), signedIn: try r["signed_in"])
            }
        }
    }
}
