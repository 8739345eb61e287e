import Foundation

extension SQLMetadataStore: AccountKeyStore {
    public func accountKeys(accountID: Int64) async throws -> [String: String] {
        try await read { db in
            var out: [String: String] = [:]
            for r in try db.rows("SELECT name, value FROM account_keys WHERE account_id = ?", [accountID]) { out[try r["name"]] = try r["value"] }
            return out
        }
    }

    public func accountKey(accountID: Int64, name: String) async throws -> String? {
        try await read { db in
            try db.row("SELECT value FROM account_keys WHERE account_id = ? AND name = ?", [accountID, name]).map { try $0["value"] as String }
        }
    }

    public func containerNames(accountID: Int64) async throws -> [String] {
        try await read { db in
            var out = Set<String>()
            for r in try db.rows("SELECT name FROM containers c WHERE c.account_id = ? AND EXISTS (SELECT 1 FROM items i WHERE i.container_id = c.id)", [accountID]) {
                out.insert(try r["name"])
            }
            for r in try db.rows("SELECT DISTINCT store FROM kv_entries WHERE account_id = ?", [accountID]) { out.insert(try r["store"]) }
            return out.sorted()
        }
    }

    public func deleteAccountKey(accountID: Int64, name: String) async throws -> Bool {
        try await write(account: accountID) { db in
            try db.execute("DELETE FROM account_keys WHERE account_id = ? AND name = ?", [accountID, name]) > 0
        }
    }

    public func putAccountKey(accountID: Int64, name: String, value: String, replace: Bool, expecting: String?, now: Date) async throws -> Bool {
        guard AccountKeyLimits.validName(name) else {
            throw StorageError(.invalidValue, "a sealed key's name is 1 to \(AccountKeyLimits.maxNameBytes) lower-case letters, digits, '.' and '-'")
        }
        guard !value.isEmpty, value.utf8.count <= AccountKeyLimits.maxValueBytes else {
            throw StorageError(.invalidValue, "a sealed key is 1 to \(AccountKeyLimits.maxValueBytes) bytes")
        }
        return try await write(account: accountID) { db in
            let existing = try db.row("SELECT value FROM account_keys WHERE account_id = ? AND name = ?", [accountID, name])
            if let expecting {
                guard let existing, try existing["value"] as String == expecting else { return false }
            }
            if existing != nil {
                guard replace || expecting != nil else { return false }
                _ = try db.execute("UPDATE account_keys SET value = ?, updated = ? WHERE account_id = ? AND name = ?", [value, now.timeIntervalSince1970, accountID, name])
                return true
            }
            let count: Int64 = try db.value("SELECT COUNT(*) FROM account_keys WHERE account_id = ?", [accountID]) ?? 0
            guard count < AccountKeyLimits.maxKeys else { throw StorageError(.invalidValue, "an account keeps at most \(AccountKeyLimits.maxKeys) sealed keys") }
            _ = try db.execute("INSERT INTO account_keys (account_id, name, value, updated) VALUES (?, ?, ?, ?)", [accountID, name, value, now.timeIntervalSince1970])
            return true
        }
    }
}
