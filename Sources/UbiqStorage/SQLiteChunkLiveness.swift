import Foundation
import GRDB
import UbiqCore

/// Garbage collection's questions (`ChunkLivenessStore`) on an embedded server's database: a
/// type of its own beside the store the routes use, sharing its connection pool.
public struct SQLiteChunkLiveness: ChunkLivenessStore {
    let store: SQLiteMetadataStore

    public init(_ store: SQLiteMetadataStore) { self.store = store }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T { try await store.read(body) }
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T { try await store.write(body) }

    public func liveChunks(among hashes: [ContentHash]) async throws -> Set<ContentHash> {
        guard !hashes.isEmpty else { return [] }
        return try await read { db in
            var live = Set<ContentHash>()
            let texts = hashes.map(\.hex)
            for table in ["account_chunks", "version_chunks"] {
                try SQLBatch.each(texts.count) { range in
                    let stmt = try db.cachedStatement(sql: "SELECT DISTINCT hash FROM \(table) WHERE hash IN (\(SQLBatch.marks(range.count)))")
                    for text in try String.fetchAll(stmt, arguments: StatementArguments(Array(texts[range]))) {
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
            let (n, freed, last) = try await write { db -> (Int, Int64, (Int64, String)?) in
                let rows = try Row.fetchAll(db.cachedStatement(sql: """
                    SELECT account_id, hash, size, added FROM account_chunks
                    WHERE (account_id, hash) > (?, ?) ORDER BY account_id, hash LIMIT ?
                    """), arguments: [from.0, from.1, page])
                guard let lastRow = rows.last else { return (0, 0, nil) }
                let used = try db.cachedStatement(sql: """
                    SELECT 1 FROM version_chunks vc JOIN versions v ON v.id = vc.version_id JOIN containers c ON c.id = v.container_id
                    WHERE vc.hash = ? AND c.account_id = ? LIMIT 1
                    """)
                let release = try db.cachedStatement(sql: "DELETE FROM account_chunks WHERE account_id = ? AND hash = ?")
                var n = 0
                var freedBy: [Int64: Int64] = [:]
                for r in rows {
                    let added: Double = r["added"], account: Int64 = r["account_id"], hash: String = r["hash"], size: Int64 = r["size"]
                    guard added < cutoff.timeIntervalSince1970, try Row.fetchOne(used, arguments: [hash, account]) == nil else { continue }
                    if !dryRun { try release.execute(arguments: [account, hash]) }
                    n += 1
                    freedBy[account, default: 0] += size
                }
                if !dryRun {
                    for (account, size) in freedBy {
                        try db.cachedStatement(sql: "UPDATE accounts SET used = max(0, used - ?) WHERE id = ?").execute(arguments: [size, account])
                    }
                }
                return (n, freedBy.values.reduce(0, +), (lastRow["account_id"], lastRow["hash"]))
            }
            chunks += n
            bytes += freed
            guard let last else { break }
            after = last
        }
        return (chunks, bytes)
    }
}
