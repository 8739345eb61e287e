import Foundation
import PostgresNIO
import UbiqCore

/// What keeps garbage collection on one server from taking a chunk that an upload on another
/// server found stored and did not write again, when several servers share one PostgreSQL
/// database and one bucket (whose pack index is in that database). A process's own uploads are
/// kept apart from its collections by the server's in-process gate; this does the same across
/// processes, exactly, with no clocks:
///
/// - an upload declares the hashes it is about to look for (`declareUpload`, committed) before
///   it asks the index whether they are stored — and asks with `FOR SHARE`
///   (`PackIndex.placesForUpload`) — and withdraws them once its account holds the chunks;
/// - a collection, in one transaction per page, first locks the page's index rows
///   (`FOR UPDATE`: an upload's look-up under way finishes first, a later one waits), then —
///   in a new statement, which sees everything committed until then — deletes those no account
///   holds, no version lists and no upload has declared (`forgetUnheld`).
///
/// So an upload that saw a chunk stored declared it before the collection's look: the chunk
/// stays. One that looks after the collection's delete finds it missing and writes it again.
/// Declarations a crash left behind are cleared after a day (`clearStaleDeclarations`; they only
/// keep garbage longer). Collections run one at a time across the servers (`aloneInFleet`).
public protocol SharedChunkGuard: Sendable {
    /// Declares that an upload is about to look for `hashes` in the store; returns its token.
    func declareUpload(_ hashes: [ContentHash], now: Date) async throws -> String
    /// Withdraws an upload's declaration (its account holds the chunks, or it failed).
    func withdrawUpload(_ token: String) async throws
    /// Of `page`, the chunks nothing holds, lists or is about to upload — forgotten from the
    /// index in the same transaction (their bytes noted as the packs' garbage) unless `dryRun`.
    func forgetUnheld(_ page: [StoredChunk], dryRun: Bool) async throws -> [StoredChunk]
    /// Runs `body` unless a collection runs on another server of the fleet (nil then).
    func aloneInFleet<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T?
    /// Clears declarations older than `cutoff` (left by a server that stopped mid-upload).
    func clearStaleDeclarations(before cutoff: Date) async throws -> Int
}

/// `SharedChunkGuard` on the PostgreSQL metadata database that holds the pack index.
public struct PostgreSQLChunkGuard: SharedChunkGuard {
    let database: PostgreSQLDatabase
    /// The advisory lock one collection in the fleet holds.
    static let collectionLock: Int64 = 0x7562_6971_0002

    public init(database: PostgreSQLDatabase) { self.database = database }

    public func declareUpload(_ hashes: [ContentHash], now: Date) async throws -> String {
        let token = UUID().uuidString
        let unique = Array(Set(hashes.map(\.hex))).sorted()
        try await database.write { db in
            try db.insertMany("INSERT INTO chunk_intents (token, hash, added)", width: 3, count: unique.count, suffix: "ON CONFLICT DO NOTHING") { i in
                [token, unique[i], now.timeIntervalSince1970]
            }
        }
        return token
    }

    public func withdrawUpload(_ token: String) async throws {
        try await database.write { db in _ = try db.execute("DELETE FROM chunk_intents WHERE token = ?", [token]) }
    }

    public func forgetUnheld(_ page: [StoredChunk], dryRun: Bool) async throws -> [StoredChunk] {
        let texts = page.map(\.hash.hex).sorted()
        guard !texts.isEmpty else { return [] }
        return try await database.write { db in
            var gone: [StoredChunk] = []
            try SQLBatch.each(texts.count) { range in
                let args: [any SQLArgument] = Array(texts[range])
                let list = SQLBatch.marks(range.count)
                // First the rows, locked (an upload's look-up under way ends first) …
                if !dryRun { _ = try db.rows("SELECT hash FROM chunk_packs WHERE hash IN (\(list)) ORDER BY hash FOR UPDATE", args) }
                // … then, in a statement that sees everything committed until now, what nothing holds.
                let unheld = """
                    c.hash IN (\(list))
                    AND NOT EXISTS (SELECT 1 FROM account_chunks a WHERE a.hash = c.hash)
                    AND NOT EXISTS (SELECT 1 FROM version_chunks v WHERE v.hash = c.hash)
                    AND NOT EXISTS (SELECT 1 FROM chunk_intents i WHERE i.hash = c.hash)
                    """
                let rows = dryRun
                    ? try db.rows("SELECT c.hash, c.pack, c.size FROM chunk_packs c WHERE \(unheld)", args)
                    : try db.rows("DELETE FROM chunk_packs c WHERE \(unheld) RETURNING c.hash, c.pack, c.size", args)
                var byPack: [String: Int64] = [:]
                for r in rows {
                    let size: Int64 = try r[2]
                    if let h = try? ContentHash(validating: try r[0] as String) { gone.append(StoredChunk(hash: h, size: Int(size))) }
                    byPack[try r[1], default: 0] += size
                }
                if !dryRun {
                    for (pack, bytes) in byPack {
                        try db.execute("""
                            INSERT INTO pack_garbage (pack, bytes) VALUES (?, ?) ON CONFLICT (pack) DO UPDATE SET bytes = pack_garbage.bytes + excluded.bytes
                            """, [pack, bytes])
                    }
                }
            }
            return gone
        }
    }

    public func aloneInFleet<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T? {
        try await database.withSessionLock(Self.collectionLock, body)
    }

    public func clearStaleDeclarations(before cutoff: Date) async throws -> Int {
        try await database.write { db in try db.execute("DELETE FROM chunk_intents WHERE added < ?", [cutoff.timeIntervalSince1970]) }
    }
}

extension PostgreSQLDatabase {
    /// The advisory lock one trash purge in the fleet holds.
    public static let purgeLock: Int64 = 0x7562_6971_0003

    /// Runs `body` unless another server on this database runs the same job now (nil then).
    public func alone<T: Sendable>(job key: Int64, _ body: @Sendable () async throws -> T) async throws -> T? {
        try await withSessionLock(key, body)
    }

    /// Runs `body` holding the session-level advisory lock `key` on a connection of its own; nil
    /// (and `body` not run) when another session — another server — holds it.
    func withSessionLock<T: Sendable>(_ key: Int64, _ body: @Sendable () async throws -> T) async throws -> T? {
        let logger = self.logger
        let c = try await onPool { try self.checkout() }
        let got: Bool
        do {
            got = try await onPool { try PGConnection(c, logger).value("SELECT pg_try_advisory_lock(?)", [key]) ?? false }
        } catch {
            await release(c, unlock: nil)
            throw PGFailure.storageError(error, location: location, committing: false)
        }
        guard got else { await release(c, unlock: nil); return nil }
        do {
            let result = try await body()
            await release(c, unlock: key)
            return result
        } catch {
            await release(c, unlock: key)
            throw error
        }
    }

    /// Gives a connection back after `withSessionLock` (unlocking first); one that fails is closed
    /// (which ends its session's locks too).
    private func release(_ c: PostgresConnection, unlock key: Int64?) async {
        let logger = self.logger
        _ = try? await onPool {
            do {
                if let key { try PGConnection(c, logger).execute("SELECT pg_advisory_unlock(?)", [key]) }
                self.checkin(c)
            } catch {
                self.discard(c)
            }
        }
    }
}
