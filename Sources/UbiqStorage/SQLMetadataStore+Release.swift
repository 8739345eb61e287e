import Foundation
import UbiqCore

/// Giving space back: an account holds a chunk (and it counts against its quota) while some
/// version of the account uses it. When versions go (history pruned, the trash purged), each of
/// their chunks that no other version of the account uses is released. The chunk's bytes stay
/// in the chunk store until garbage collection finds that no account holds them
/// (`GarbageCollector`), so a device that needs it again simply uploads it again (the commit
/// lists it as missing).
extension SQLMetadataStore {
    /// The distinct chunk hashes of these versions.
    func chunkHashes(_ db: any SQLConnection, versions: [Int64]) throws -> Set<String> {
        var out = Set<String>()
        for v in versions { out.formUnion(try db.values("SELECT DISTINCT hash FROM version_chunks WHERE version_id = ?", [v]) as [String]) }
        return out
    }

    /// Releases from `account` each of `hashes` that no version of the account uses any more;
    /// returns the bytes given back.
    @discardableResult
    func releaseUnused(_ db: any SQLConnection, account: Int64, hashes: Set<String>) throws -> Int64 {
        var freed: Int64 = 0
        for h in hashes where try db.row("""
            SELECT 1 FROM version_chunks vc JOIN versions v ON v.id = vc.version_id JOIN containers c ON c.id = v.container_id
            WHERE vc.hash = ? AND c.account_id = ? LIMIT 1
            """, [h, account]) == nil {
            freed += try db.value("DELETE FROM account_chunks WHERE account_id = ? AND hash = ? RETURNING size", [account, h]) ?? 0
        }
        if freed > 0 { try db.execute("UPDATE accounts SET used = \(db.dialect.greatest)(0, used - ?) WHERE id = ?", [freed, account]) }
        return freed
    }

    /// Purges every item that went to the trash before `cutoff`, in every account: its versions
    /// are deleted and the chunks only they used released. The item itself stays as a deleted
    /// record without content (no longer listed in the trash, not restorable), so a device that
    /// was offline all along still learns from the change feed that it was deleted. Each
    /// account is purged in a transaction of its own, under its lock (a restore that lands first
    /// keeps its item). Returns how many items and bytes.
    public func purgeTrash(deletedBefore cutoff: Date) async throws -> (items: Int, bytes: Int64) {
        let accounts: [Int64] = try await read { db in
            try db.values("""
                SELECT DISTINCT c.account_id FROM items i JOIN containers c ON c.id = i.container_id
                WHERE i.deleted_at IS NOT NULL AND i.deleted_at < ? AND i.trash_group IS NOT NULL ORDER BY c.account_id
                """, [cutoff.timeIntervalSince1970])
        }
        var total = (items: 0, bytes: Int64(0))
        for account in accounts {
            let done = try await write(account: account) { db in
                try self.purge(db, account: account, try db.values("""
                    SELECT i.id FROM items i JOIN containers c ON c.id = i.container_id
                    WHERE c.account_id = ? AND i.deleted_at IS NOT NULL AND i.deleted_at < ? AND i.trash_group IS NOT NULL
                    """, [account, cutoff.timeIntervalSince1970]))
            }
            total = (total.items + done.items, total.bytes + done.bytes)
        }
        return total
    }

    /// Empties one container's trash now (`ubiq trash empty`): every item in it is purged as
    /// `purgeTrash` would after 30 days. Returns how many items and bytes.
    public func emptyTrash(_ ctx: AuthContext, container: ContainerID) async throws -> (items: Int, bytes: Int64) {
        try await write(account: ctx.accountID) { db in
            guard let c = try db.containerRow(accountID: ctx.accountID, name: container, create: false) else { return (0, 0) }
            return try self.purge(db, account: ctx.accountID, try db.values(
                "SELECT id FROM items WHERE container_id = ? AND deleted_at IS NOT NULL AND trash_group IS NOT NULL", [c]))
        }
    }

    /// Purges these trashed items of one account: their versions go, and the chunks only they
    /// used are released.
    func purge(_ db: any SQLConnection, account: Int64, _ items: [Int64]) throws -> (items: Int, bytes: Int64) {
        guard !items.isEmpty else { return (0, 0) }
        var versions: [Int64] = []
        for i in items { versions += try db.values("SELECT id FROM versions WHERE item_id = ?", [i]) as [Int64] }
        let hashes = try self.chunkHashes(db, versions: versions)
        for i in items {
            try db.execute("UPDATE items SET current_version = NULL, trash_group = NULL WHERE id = ?", [i])
            try db.execute("DELETE FROM versions WHERE item_id = ?", [i])  // their chunk lists go with them
        }
        try forgetOldDeletes(db, account: account)
        return (items.count, try self.releaseUnused(db, account: account, hashes: hashes))
    }

    /// Purged items stay as deletes in the change feed, so devices hear of them; an account
    /// keeps its newest `deletesKept` (#45 row 2: a loop of make, delete, empty the trash grew
    /// the database without bound). Older ones are forgotten, at most 10,000 a call, and each
    /// container's horizon moves past them.
    func forgetOldDeletes(_ db: any SQLConnection, account: Int64) throws {
        let rows = try db.rows("""
            SELECT i.id, i.container_id, i.seq FROM items i JOIN containers c ON c.id = i.container_id
            WHERE c.account_id = ? AND i.deleted_at IS NOT NULL AND i.trash_group IS NULL
            ORDER BY i.seq DESC LIMIT 10000 OFFSET ?
            """, [account, deletesKept.load(ordering: .relaxed)])
        guard !rows.isEmpty else { return }
        var horizon: [Int64: Int64] = [:]
        var ids: [Int64] = []
        for r in rows {
            let container: Int64 = try r["container_id"], seq: Int64 = try r["seq"]
            horizon[container] = max(horizon[container] ?? 0, seq)
            ids.append(try r["id"])
        }
        try SQLBatch.each(ids.count) { range in
            let some = Array(ids[range])
            try db.execute("DELETE FROM changes WHERE item_id IN (\(SQLBatch.marks(some.count)))", some)
            try db.execute("DELETE FROM items WHERE id IN (\(SQLBatch.marks(some.count)))", some)
        }
        for (container, seq) in horizon {
            try db.execute("UPDATE containers SET horizon = \(db.dialect.greatest)(horizon, ?) WHERE id = ?", [seq, container])
        }
    }
}
