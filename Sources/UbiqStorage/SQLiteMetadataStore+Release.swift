import Foundation
import GRDB
import UbiqCore

/// Giving space back: an account holds a chunk (and it counts against its quota) while some
/// version of the account uses it. When versions go (history pruned, the trash purged), each of
/// their chunks that no other version of the account uses is released. The chunk's bytes stay
/// in the chunk store (other accounts may hold them; packs are not compacted yet), so a device
/// that needs it again simply uploads it again (the commit lists it as missing).
extension SQLiteMetadataStore {
    /// The distinct chunk hashes of these versions.
    func chunkHashes(_ db: Database, versions: [Int64]) throws -> Set<String> {
        var out = Set<String>()
        let stmt = try db.cachedStatement(sql: "SELECT DISTINCT hash FROM version_chunks WHERE version_id = ?")
        for v in versions { out.formUnion(try String.fetchAll(stmt, arguments: [v])) }
        return out
    }

    /// Releases from `account` each of `hashes` that no version of the account uses any more;
    /// returns the bytes given back.
    @discardableResult
    func releaseUnused(_ db: Database, account: Int64, hashes: Set<String>) throws -> Int64 {
        let used = try db.cachedStatement(sql: """
            SELECT 1 FROM version_chunks vc JOIN versions v ON v.id = vc.version_id JOIN containers c ON c.id = v.container_id
            WHERE vc.hash = ? AND c.account_id = ? LIMIT 1
            """)
        let release = try db.cachedStatement(sql: "DELETE FROM account_chunks WHERE account_id = ? AND hash = ? RETURNING size")
        var freed: Int64 = 0
        for h in hashes where try Int.fetchOne(used, arguments: [h, account]) == nil {
            freed += try Int64.fetchOne(release, arguments: [account, h]) ?? 0
        }
        if freed > 0 { try db.cachedStatement(sql: "UPDATE accounts SET used = max(0, used - ?) WHERE id = ?").execute(arguments: [freed, account]) }
        return freed
    }

    /// Purges every item that went to the trash before `cutoff`, in every account: its versions
    /// are deleted and the chunks only they used released. The item itself stays as a deleted
    /// record without content (no longer listed in the trash, not restorable), so a device that
    /// was offline all along still learns from the change feed that it was deleted. Returns how
    /// many items and bytes.
    public func purgeTrash(deletedBefore cutoff: Date) async throws -> (items: Int, bytes: Int64) {
        try await write { db in
            try self.purge(db, try Row.fetchAll(db, sql: """
                SELECT i.id, c.account_id FROM items i JOIN containers c ON c.id = i.container_id
                WHERE i.deleted_at IS NOT NULL AND i.deleted_at < ? AND i.trash_group IS NOT NULL
                """, arguments: [cutoff.timeIntervalSince1970]))
        }
    }

    /// Empties one container's trash now (`ubiq trash empty`): every item in it is purged as
    /// `purgeTrash` would after 30 days. Returns how many items and bytes.
    public func emptyTrash(_ ctx: AuthContext, container: ContainerID) async throws -> (items: Int, bytes: Int64) {
        try await write { db in
            guard let c = try db.containerRow(accountID: ctx.accountID, name: container, create: false) else { return (0, 0) }
            return try self.purge(db, try Row.fetchAll(db, sql: """
                SELECT i.id, ? AS account_id FROM items i WHERE i.container_id = ? AND i.deleted_at IS NOT NULL AND i.trash_group IS NOT NULL
                """, arguments: [ctx.accountID, c]))
        }
    }

    /// Purges these trashed items (`id`, `account_id` rows): their versions go, and the chunks
    /// only they used are released.
    func purge(_ db: Database, _ rows: [Row]) throws -> (items: Int, bytes: Int64) {
        guard !rows.isEmpty else { return (0, 0) }
        var byAccount: [Int64: [Int64]] = [:]
        for r in rows { byAccount[r["account_id"], default: []].append(r["id"]) }
        let versionsOf = try db.cachedStatement(sql: "SELECT id FROM versions WHERE item_id = ?")
        let purge = try db.cachedStatement(sql: "UPDATE items SET current_version = NULL, trash_group = NULL WHERE id = ?")
        let dropVersions = try db.cachedStatement(sql: "DELETE FROM versions WHERE item_id = ?")  // their chunk lists go with them
        var bytes: Int64 = 0
        for (account, items) in byAccount {
            var versions: [Int64] = []
            for i in items { versions += try Int64.fetchAll(versionsOf, arguments: [i]) }
            let hashes = try self.chunkHashes(db, versions: versions)
            for i in items {
                try purge.execute(arguments: [i])
                try dropVersions.execute(arguments: [i])
            }
            bytes += try self.releaseUnused(db, account: account, hashes: hashes)
        }
        return (rows.count, bytes)
    }
}
