import Foundation
import GRDB
import UbiqCore

extension SQLiteMetadataStore: AccountStore {
    public func createAccount(name: String, password: PasswordRecord, quota: Int64, now: Date) async throws -> AccountRecord {
        try await write { db in
            if try Row.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM accounts WHERE name = ?"), arguments: [name]) != nil {
                throw StorageError(.userExists, "user '\(name)' already exists")
            }
            try db.execute(
                sql: "INSERT INTO accounts (name, salt, iterations, derived, quota, created) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [name, Data(password.salt), password.iterations, Data(password.derived), quota, now.timeIntervalSince1970])
            return AccountRecord(id: db.lastInsertedRowID, name: name, password: password, quota: quota, used: 0)
        }
    }

    public func account(named name: String) async throws -> AccountRecord? {
        try await read { db in
            guard let r = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM accounts WHERE name = ?"), arguments: [name]) else { return nil }
            let salt: Data = r["salt"], derived: Data = r["derived"]
            return AccountRecord(id: r["id"], name: r["name"],
                                 password: PasswordRecord(salt: [UInt8](salt), iterations: r["iterations"], derived: [UInt8](derived)),
                                 quota: r["quota"], used: r["used"])
        }
    }

    public func createSession(accountID: Int64, deviceID: DeviceID, deviceName: String, tokenHash: String, now: Date) async throws -> AuthContext {
        try await write { db in
            let t = now.timeIntervalSince1970
            try db.execute(sql: """
                INSERT INTO devices (id, account_id, name, created, last_seen) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (account_id, id) DO UPDATE SET name = excluded.name, last_seen = excluded.last_seen
                """, arguments: [deviceID.description, accountID, deviceName, t, t])
            try db.execute(sql: "INSERT INTO tokens (hash, account_id, device_id, created) VALUES (?, ?, ?, ?)",
                           arguments: [tokenHash, accountID, deviceID.description, t])
            let user = try String.fetchOne(db.cachedStatement(sql: "SELECT name FROM accounts WHERE id = ?"), arguments: [accountID]) ?? ""
            return AuthContext(accountID: accountID, user: user, deviceID: deviceID, deviceName: deviceName)
        }
    }

    public func authenticate(tokenHash: String, now: Date) async throws -> AuthContext? {
        try await read { db in
            guard let r = try Row.fetchOne(db, sql: """
                SELECT t.account_id, a.name AS user, t.device_id, d.name AS device_name
                FROM tokens t JOIN accounts a ON a.id = t.account_id
                JOIN devices d ON d.account_id = t.account_id AND d.id = t.device_id
                WHERE t.hash = ?
                """, arguments: [tokenHash]) else { return nil }
            guard let device = DeviceID(string: r["device_id"]) else { return nil }
            return AuthContext(accountID: r["account_id"], user: r["user"], deviceID: device, deviceName: r["device_name"])
        }
    }

    public func revoke(tokenHash: String) async throws {
        try await write { db in try db.cachedStatement(sql: "DELETE FROM tokens WHERE hash = ?").execute(arguments: [tokenHash]) }
    }

    public func revokeDevice(accountID: Int64, deviceID: DeviceID) async throws -> Bool {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM tokens WHERE account_id = ? AND device_id = ?").execute(arguments: [accountID, deviceID.description])
            return try Row.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM devices WHERE account_id = ? AND id = ?"), arguments: [accountID, deviceID.description]) != nil
        }
    }
}

extension SQLiteMetadataStore: ChunkOwnershipStore {
    public func missingChunks(accountID: Int64, hashes: [ContentHash]) async throws -> [ContentHash] {
        try await read { db in try db.missingHashes(accountID: accountID, hashes) }
    }

    public func recordChunk(accountID: Int64, hash: ContentHash, size: Int, now: Date) async throws {
        try await write { db in
            if try db.ownsChunk(accountID: accountID, hash: hash) { return }
            guard let a = try Row.fetchOne(db.cachedStatement(sql: "SELECT quota, used FROM accounts WHERE id = ?"), arguments: [accountID]) else {
                throw StorageError(.unauthorized, "account no longer exists")
            }
            let quota: Int64 = a["quota"], used: Int64 = a["used"]
            if used + Int64(size) > quota {
                throw StorageError(.storageFull, "storage full: \(ByteSize.format(used)) of \(ByteSize.format(quota)) used")
            }
            try db.cachedStatement(sql: "INSERT INTO account_chunks (account_id, hash, size, added) VALUES (?, ?, ?, ?)")
                .execute(arguments: [accountID, hash.hex, size, now.timeIntervalSince1970])
            try db.cachedStatement(sql: "UPDATE accounts SET used = used + ? WHERE id = ?").execute(arguments: [size, accountID])
        }
    }

    public func recordChunks(accountID: Int64, _ chunks: [(hash: ContentHash, size: Int)], now: Date) async throws {
        try await write { db in
            var fresh: [(String, Int)] = []
            var seen = Set<ContentHash>()
            // In key order, so each look-up and insert lands next to the one before.
            for c in chunks.sorted(by: { $0.hash < $1.hash }) where seen.insert(c.hash).inserted {
                if try !db.ownsChunk(accountID: accountID, hash: c.hash) { fresh.append((c.hash.hex, c.size)) }
            }
            guard !fresh.isEmpty else { return }
            guard let a = try Row.fetchOne(db.cachedStatement(sql: "SELECT quota, used FROM accounts WHERE id = ?"), arguments: [accountID]) else {
                throw StorageError(.unauthorized, "account no longer exists")
            }
            let quota: Int64 = a["quota"], used: Int64 = a["used"]
            let adding = fresh.reduce(Int64(0)) { $0 + Int64($1.1) }
            if used + adding > quota {
                throw StorageError(.storageFull, "storage full: \(ByteSize.format(used)) of \(ByteSize.format(quota)) used")
            }
            let insert = try db.cachedStatement(sql: "INSERT INTO account_chunks (account_id, hash, size, added) VALUES (?, ?, ?, ?)")
            for (hash, size) in fresh { try insert.execute(arguments: [accountID, hash, size, now.timeIntervalSince1970]) }
            try db.cachedStatement(sql: "UPDATE accounts SET used = used + ? WHERE id = ?").execute(arguments: [adding, accountID])
        }
    }

    public func ownsChunk(accountID: Int64, hash: ContentHash) async throws -> Bool {
        try await read { db in try db.ownsChunk(accountID: accountID, hash: hash) }
    }

    public func usage(accountID: Int64) async throws -> (quota: Int64, used: Int64) {
        try await read { db in
            guard let a = try Row.fetchOne(db.cachedStatement(sql: "SELECT quota, used FROM accounts WHERE id = ?"), arguments: [accountID]) else {
                throw StorageError(.unauthorized, "account no longer exists")
            }
            return (a["quota"], a["used"])
        }
    }
}
