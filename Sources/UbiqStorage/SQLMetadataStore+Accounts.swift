import Foundation
import UbiqCore

extension SQLMetadataStore: AccountStore {
    public func createAccount(name: String, password: PasswordRecord, quota: Int64, now: Date) async throws -> AccountRecord {
        try await write { db in
            if try db.row("SELECT 1 FROM accounts WHERE name = ?", [name]) != nil {
                throw StorageError(.userExists, "user '\(name)' already exists")
            }
            let id = try db.insert("INSERT INTO accounts (name, salt, iterations, derived, quota, created) VALUES (?, ?, ?, ?, ?, ?)",
                                   [name, Data(password.salt), password.iterations, Data(password.derived), quota, now.timeIntervalSince1970])
            return AccountRecord(id: id, name: name, password: password, quota: quota, used: 0)
        }
    }

    public func account(named name: String) async throws -> AccountRecord? {
        try await read { db in
            guard let r = try db.row("SELECT * FROM accounts WHERE name = ?", [name]) else { return nil }
            let salt: Data = try r["salt"], derived: Data = try r["derived"]
            return AccountRecord(id: try r["id"], name: try r["name"],
                                 password: PasswordRecord(salt: [UInt8](salt), iterations: try r["iterations"], derived: [UInt8](derived)),
                                 quota: try r["quota"], used: try r["used"])
        }
    }

    public func createSession(accountID: Int64, deviceID: DeviceID, deviceName: String, tokenHash: String, now: Date) async throws -> AuthContext {
        try await write { db in
            let t = now.timeIntervalSince1970
            try db.execute("""
                INSERT INTO devices (id, account_id, name, created, last_seen) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (account_id, id) DO UPDATE SET name = excluded.name, last_seen = excluded.last_seen
                """, [deviceID.description, accountID, deviceName, t, t])
            try db.execute("INSERT INTO tokens (hash, account_id, device_id, created) VALUES (?, ?, ?, ?)",
                           [tokenHash, accountID, deviceID.description, t])
            let user: String = try db.value("SELECT name FROM accounts WHERE id = ?", [accountID]) ?? ""
            return AuthContext(accountID: accountID, user: user, deviceID: deviceID, deviceName: deviceName)
        }
    }

    public func liveTokens(among hashes: [String]) async throws -> Set<String> {
        guard !hashes.isEmpty else { return [] }
        return try await readEach { db in
            var live = Set<String>()
            try SQLBatch.each(hashes.count) { range in
                for r in try db.rows("""
                    SELECT t.hash FROM tokens t JOIN accounts a ON a.id = t.account_id
                    JOIN devices d ON d.account_id = t.account_id AND d.id = t.device_id
                    WHERE t.hash IN (\(SQLBatch.marks(range.count)))
                    """, Array(hashes[range])) { live.insert(try r["hash"]) }
            }
            return live
        }
    }

    public func authenticate(tokenHash: String, now: Date) async throws -> AuthContext? {
        try await readEach { db in
            guard let r = try db.row("""
                SELECT t.account_id, a.name AS user_name, t.device_id, d.name AS device_name
                FROM tokens t JOIN accounts a ON a.id = t.account_id
                JOIN devices d ON d.account_id = t.account_id AND d.id = t.device_id
                WHERE t.hash = ?
                """, [tokenHash]) else { return nil }
            guard let device = DeviceID(string: try r["device_id"]) else { return nil }
            return AuthContext(accountID: try r["account_id"], user: try r["user_name"], deviceID: device, deviceName: try r["device_name"])
        }
    }

    public func revoke(tokenHash: String) async throws {
        try await write { db in _ = try db.execute("DELETE FROM tokens WHERE hash = ?", [tokenHash]) }
    }

    public func revokeDevice(accountID: Int64, deviceID: DeviceID) async throws -> Bool {
        try await write { db in
            try db.execute("DELETE FROM tokens WHERE account_id = ? AND device_id = ?", [accountID, deviceID.description])
            return try db.row("SELECT 1 FROM devices WHERE account_id = ? AND id = ?", [accountID, deviceID.description]) != nil
        }
    }
}

extension SQLMetadataStore: ChunkOwnershipStore {
    public func missingChunks(accountID: Int64, hashes: [ContentHash]) async throws -> [ContentHash] {
        try await readEach { db in try db.missingHashes(accountID: accountID, hashes) }
    }

    public func recordChunk(accountID: Int64, hash: ContentHash, size: Int, now: Date) async throws {
        try await write(account: accountID) { db in
            guard let a = try db.standing(accountID: accountID, hash: hash) else {
                throw StorageError(.unauthorized, "account no longer exists")
            }
            if a.owned { return }
            let quota = a.quota, used = a.used
            if used + Int64(size) > quota {
                throw StorageError(.storageFull, "storage full: \(ByteSize.format(used)) of \(ByteSize.format(quota)) used")
            }
            try db.execute("INSERT INTO account_chunks (account_id, hash, size, added) VALUES (?, ?, ?, ?)", [accountID, hash.hex, size, now.timeIntervalSince1970])
            try db.execute("UPDATE accounts SET used = used + ? WHERE id = ?", [size, accountID])
        }
    }

    public func recordChunks(accountID: Int64, _ chunks: [(hash: ContentHash, size: Int)], now: Date) async throws {
        try await write(account: accountID) { db in
            // In key order, so each look-up and insert lands next to the one before.
            let sorted = chunks.sorted(by: { $0.hash < $1.hash })
            let missing = Set(try db.missingHashes(accountID: accountID, sorted.map(\.hash)))
            var fresh: [(String, Int)] = []
            var seen = Set<ContentHash>()
            for c in sorted where missing.contains(c.hash) && seen.insert(c.hash).inserted { fresh.append((c.hash.hex, c.size)) }
            guard !fresh.isEmpty else { return }
            guard let a = try db.row("SELECT quota, used FROM accounts WHERE id = ?", [accountID]) else {
                throw StorageError(.unauthorized, "account no longer exists")
            }
            let quota: Int64 = try a["quota"], used: Int64 = try a["used"]
            let adding = fresh.reduce(Int64(0)) { $0 + Int64($1.1) }
            if used + adding > quota {
                throw StorageError(.storageFull, "storage full: \(ByteSize.format(used)) of \(ByteSize.format(quota)) used")
            }
            let added = now.timeIntervalSince1970
            try db.insertMany("INSERT INTO account_chunks (account_id, hash, size, added)", width: 4, count: fresh.count) { i in
                [accountID, fresh[i].0, fresh[i].1, added]
            }
            try db.execute("UPDATE accounts SET used = used + ? WHERE id = ?", [adding, accountID])
        }
    }

    public func ownsChunk(accountID: Int64, hash: ContentHash) async throws -> Bool {
        try await readEach { db in try db.ownsChunk(accountID: accountID, hash: hash) }
    }

    public func chunkStanding(accountID: Int64, hash: ContentHash) async throws -> (owned: Bool, quota: Int64, used: Int64) {
        try await readEach { db in
            guard let a = try db.standing(accountID: accountID, hash: hash) else {
                throw StorageError(.unauthorized, "account no longer exists")
            }
            return a
        }
    }

    public func usage(accountID: Int64) async throws -> (quota: Int64, used: Int64) {
        try await readEach { db in
            guard let a = try db.row("SELECT quota, used FROM accounts WHERE id = ?", [accountID]) else {
                throw StorageError(.unauthorized, "account no longer exists")
            }
            return (try a["quota"], try a["used"])
        }
    }

    public func referenceRoom(accountID: Int64) async throws -> Int64 {
        try await readEach { db in
            guard let a = try db.row("SELECT quota, refs FROM accounts WHERE id = ?", [accountID]) else {
                throw StorageError(.unauthorized, "account no longer exists")
            }
            return max(0, ChunkReferenceBudget.limit(quota: try a["quota"]) - (try a["refs"] as Int64))
        }
    }
}
