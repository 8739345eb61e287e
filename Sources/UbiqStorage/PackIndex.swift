import Foundation
import GRDB
import UbiqCore

/// Where a packed chunk lies.
typealias PackPlace = (pack: String, offset: Int, size: Int)

/// The index of a pack store (the chunk folder's, the object store's): hash → pack, offset,
/// size (`chunk_packs`), and the bytes forgotten in each pack since it was written
/// (`pack_garbage`, for compaction). One SQLite file, flushed on every commit.
struct PackIndex: Sendable {
    let pool: DatabasePool

    init(path: String) throws {
        var config = Configuration()
        config.busyMode = .timeout(10)
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL; PRAGMA temp_store = MEMORY") }
        do {
            pool = try DatabasePool(path: path, configuration: config)
            var m = DatabaseMigrator()
            m.registerMigration("v1-packs") { db in
                try db.execute(sql: "CREATE TABLE chunk_packs (hash TEXT PRIMARY KEY, pack TEXT NOT NULL, offset INTEGER NOT NULL, size INTEGER NOT NULL) WITHOUT ROWID")
            }
            // Garbage collection: a pack's chunks by pack, and the bytes forgotten in each pack.
            m.registerMigration("v2-pack-garbage") { db in
                try db.execute(sql: """
                    CREATE INDEX chunk_packs_pack ON chunk_packs(pack);
                    CREATE TABLE pack_garbage (pack TEXT PRIMARY KEY, bytes INTEGER NOT NULL) WITHOUT ROWID;
                    """)
            }
            // Each pack's size as written (an object store's packs are not files to stat).
            m.registerMigration("v3-pack-sizes") { db in
                try db.execute(sql: "CREATE TABLE pack_sizes (pack TEXT PRIMARY KEY, size INTEGER NOT NULL) WITHOUT ROWID")
            }
            try m.migrate(pool)
        } catch {
            throw StorageError(.storageFailure, "cannot open the chunk index \(path): \(error)")
        }
    }

    /// Where a packed chunk lies, if it is packed.
    func place(_ hash: ContentHash) throws -> PackPlace? {
        try places([hash])[hash]
    }

    /// Where each packed chunk of `hashes` lies (one read of the index for all of them).
    func places(_ hashes: [ContentHash]) throws -> [ContentHash: PackPlace] {
        do {
            return try pool.read { db in
                let stmt = try db.cachedStatement(sql: "SELECT pack, offset, size FROM chunk_packs WHERE hash = ?")
                var out: [ContentHash: PackPlace] = [:]
                for h in hashes where out[h] == nil {
                    if let r = try Row.fetchOne(stmt, arguments: [h.hex]) { out[h] = (r[0], r[1], r[2]) }
                }
                return out
            }
        } catch {
            throw StorageError(.storageFailure, "cannot read the chunk index: \(error)")
        }
    }

    /// Records that `chunks` lie at their ranges of the new pack `name` (a chunk indexed already
    /// keeps its place), in one transaction.
    func record(pack name: String, size: Int, _ chunks: [(ContentHash, Range<Int>)]) async throws {
        do {
            try await pool.write { db in
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO pack_sizes (pack, size) VALUES (?, ?)").execute(arguments: [name, size])
                let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO chunk_packs (hash, pack, offset, size) VALUES (?, ?, ?, ?)")
                // In key order: each insert lands next to the one before (a batch's hashes are random).
                for (hash, range) in chunks.sorted(by: { $0.0 < $1.0 }) { try insert.execute(arguments: [hash.hex, name, range.lowerBound, range.count]) }
            }
        } catch {
            throw StorageError(.storageFailure, "cannot record a chunk pack: \(error)")
        }
    }

    /// Every pack an index row names.
    func packNames() async throws -> Set<String> {
        try await read { db in Set(try String.fetchAll(db, sql: "SELECT DISTINCT pack FROM chunk_packs")) }
    }

    /// Indexed chunks after `after` (hex) in hash order, at most `limit`.
    func page(after: String, limit: Int) async throws -> [StoredChunk] {
        try await read { db in
            try Row.fetchAll(db.cachedStatement(sql: "SELECT hash, size FROM chunk_packs WHERE hash > ? ORDER BY hash LIMIT ?"), arguments: [after, max(1, limit)])
                .compactMap { r in (try? ContentHash(validating: r[0])).map { StoredChunk(hash: $0, size: r[1]) } }
        }
    }

    /// Every indexed chunk, a page of at most `pageSize` at a time in hash order.
    func eachPage(_ pageSize: Int, _ visit: ([StoredChunk]) async throws -> Void) async throws {
        var after = ""
        while true {
            let page = try await self.page(after: after, limit: pageSize)
            guard let last = page.last else { return }
            after = last.hash.hex
            try await visit(page)
        }
    }

    /// Deletes the rows of `hashes` and notes, in the same transaction, the bytes each pack lost.
    /// Returns the bytes forgotten.
    func forget(_ hashes: [ContentHash]) async throws -> Int64 {
        let texts = hashes.map(\.hex)
        return try await write { db in
            let drop = try db.cachedStatement(sql: "DELETE FROM chunk_packs WHERE hash = ? RETURNING pack, size")
            let note = try db.cachedStatement(sql: """
                INSERT INTO pack_garbage (pack, bytes) VALUES (?, ?) ON CONFLICT(pack) DO UPDATE SET bytes = bytes + excluded.bytes
                """)
            var byPack: [String: Int64] = [:]
            for t in texts {
                if let r = try Row.fetchOne(drop, arguments: [t]) { byPack[r[0], default: 0] += r[1] }
            }
            for (pack, size) in byPack { try note.execute(arguments: [pack, size]) }
            return byPack.values.reduce(0, +)
        }
    }

    /// The packs something was forgotten in, with the bytes and chunks still indexed in each.
    func packsWithGarbage() async throws -> [(pack: String, live: Int64, count: Int)] {
        try await read { db in
            try Row.fetchAll(db, sql: """
                SELECT g.pack, coalesce(sum(c.size), 0) AS live, count(c.hash) AS n FROM pack_garbage g LEFT JOIN chunk_packs c ON c.pack = g.pack GROUP BY g.pack
                """).map { ($0[0], $0[1], $0[2]) }
        }
    }

    /// The size `pack` was written with (nil for a pack written before sizes were kept).
    func size(of pack: String) async throws -> Int? {
        try await read { db in try Int.fetchOne(db.cachedStatement(sql: "SELECT size FROM pack_sizes WHERE pack = ?"), arguments: [pack]) }
    }

    /// The chunks indexed in `pack`, in the order they lie.
    func rows(of pack: String) async throws -> [(hash: String, offset: Int, size: Int)] {
        try await read { db in
            try Row.fetchAll(db.cachedStatement(sql: "SELECT hash, offset, size FROM chunk_packs WHERE pack = ? ORDER BY offset"), arguments: [pack])
                .map { ($0[0], $0[1], $0[2]) }
        }
    }

    /// Moves `moved` chunks from `old` to their offsets in `new` and drops `old`'s garbage note,
    /// in one transaction.
    func move(_ moved: [(hash: String, offset: Int)], from old: String, to new: String, size: Int) async throws {
        try await write { db in
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO pack_sizes (pack, size) VALUES (?, ?)").execute(arguments: [new, size])
            try db.execute(sql: "DELETE FROM pack_sizes WHERE pack = ?", arguments: [old])
            let move = try db.cachedStatement(sql: "UPDATE chunk_packs SET pack = ?, offset = ? WHERE hash = ? AND pack = ?")
            for m in moved { try move.execute(arguments: [new, m.offset, m.hash, old]) }
            try db.execute(sql: "DELETE FROM pack_garbage WHERE pack = ?", arguments: [old])
        }
    }

    /// Drops the garbage note of a pack that is gone.
    func dropNote(_ pack: String) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM pack_garbage WHERE pack = ?", arguments: [pack])
            try db.execute(sql: "DELETE FROM pack_sizes WHERE pack = ?", arguments: [pack])
        }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do { return try await pool.read(body) } catch let e as StorageError { throw e } catch {
            throw StorageError(.storageFailure, "cannot read the chunk index: \(error)")
        }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do { return try await pool.write(body) } catch let e as StorageError { throw e } catch {
            throw StorageError(.storageFailure, "cannot write the chunk index: \(error)")
        }
    }
}
