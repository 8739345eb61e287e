import Foundation
import UbiqCore

/// Garbage collection's questions (`ChunkLivenessStore`) on the server's database (SQLite or PostgreSQL): a
/// type of its own beside the store the routes use, sharing its connection pool.
public struct SQLChunkLiveness: ChunkLivenessStore {
    let store: SQLMetadataStore

    public init(_ store: SQLMetadataStore) { self.store = store }

    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T { try await store.read(body) }
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T { try await store.write(body) }

    public func liveChunks(among hashes: [ContentHash]) async throws -> Set<ContentHash> {
        guard !hashes.isEmpty else { return [] }
        return try await read { db in
            var live = Set<ContentHash>()
            let texts = hashes.map(\.hex)
            for table in ["account_chunks", "version_chunks"] {
                try SQLBatch.each(texts.count) { range in
                    let args: [any SQLArgument] = Array(texts[range])
                    for text in try db.values("SELECT DISTINCT hash FROM \(table) WHERE hash IN (\(SQLBatch.marks(range.count)))", args) as [String] {
                        if let h = try? ContentHash(validating: text) { live.insert(h) }
                    }
                }
            }
            return live
        }
    }

    /// Walks the account's uploads a page at a time (each page its own transaction, so uploads
    /// and commits are never held up long); a chunk is released only if, in the transaction that
    /// releases it, no version of its account lists it — a commit that lands first keeps it.
    public func releaseUncommitted(uploadedBefore cutoff: Date, dryRun: Bool) async throws -> (chunks: Int, bytes: Int64) {
        var chunks = 0
        var bytes: Int64 = 0
        var after: (Int64, String) = (Int64.min, "")
        let page = 2_000
        while true {
            let from = after
            let (n, freed, last) = try await store.write { db -> (Int, Int64, (Int64, String)?) in
                let rows = try db.rows("""
                    SELECT account_id, hash, size, added FROM account_chunks
                    WHERE (account_id, hash) > (?, ?) ORDER BY account_id, hash LIMIT ?
                    """, [from.0, from.1, page])
                guard let lastRow = rows.last else { return (0, 0, nil) }
                // The page's accounts, locked in order (a commit of one of them waits, or lands first).
                var locked = Set<Int64>()
                for r in rows { let a: Int64 = try r["account_id"]; if locked.insert(a).inserted { try db.lockAccount(a) } }
                var n = 0
                var freedBy: [Int64: Int64] = [:]
                for r in rows {
                    let added: Double = try r["added"], account: Int64 = try r["account_id"], hash: String = try r["hash"], size: Int64 = try r["size"]
                    guard added < cutoff.timeIntervalSince1970, try db.row("""
                        SELECT 1 FROM version_chunks vc JOIN versions v ON v.id = vc.version_id JOIN containers c ON c.id = v.container_id
                        WHERE vc.hash = ? AND c.account_id = ? LIMIT 1
                        """, [hash, account]) == nil else { continue }
                    if !dryRun { try db.execute("DELETE FROM account_chunks WHERE account_id = ? AND hash = ?", [account, hash]) }
                    n += 1
                    freedBy[account, default: 0] += size
                }
                if !dryRun {
                    for (account, size) in freedBy {
                        try db.execute("UPDATE accounts SET used = \(db.dialect.greatest)(0, used - ?) WHERE id = ?", [size, account])
                    }
                }
                return (n, freedBy.values.reduce(0, +), (try lastRow["account_id"], try lastRow["hash"]))
            }
            chunks += n
            bytes += freed
            guard let last else { break }
            after = last
        }
        return (chunks, bytes)
    }
}
