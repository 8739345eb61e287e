import Foundation
import GRDB
import UbiqCore

/// Where a packed chunk lies.
typealias PackPlace = (pack: String, offset: Int, size: Int)

/// The index of a pack store (the chunk folder's, the object store's): hash → pack, offset,
/// size (`chunk_packs`), the bytes forgotten in each pack since it was written
/// (`pack_garbage`, for compaction) and each pack's size (`pack_sizes`). A SQLite file of its
/// own (the folder, and an object store beside SQLite metadata), or tables of the PostgreSQL
/// metadata database (an object store several servers share: every server sees every pack).
struct PackIndex: Sendable {
    let database: any SQLDatabase
    /// The same database when it is a SQLite file, for look-ups from synchronous code.
    let sqlite: SQLiteDatabase?

    /// The index in its own SQLite file (flushed on every commit).
    init(path: String) throws {
        do {
            let db = try SQLiteDatabase(path: path, migrator: Self.migrator)
            database = db
            sqlite = db
        } catch let e as StorageError {
            throw StorageError(.storageFailure, "cannot open the chunk index \(path): \(e.message)")
        }
    }

    /// The index in a database that has its tables (`PostgreSQLSchema`'s `v2-packs`).
    init(database: any SQLDatabase) {
        self.database = database
        sqlite = database as? SQLiteDatabase
    }

    static var migrator: DatabaseMigrator {
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
        return m
    }

    /// Where each packed chunk of `hashes` lies, asked in lists of up to `SQLBatch.rows`.
    static func places(_ db: any SQLConnection, _ hashes: [ContentHash], lock: Bool = false) throws -> [ContentHash: PackPlace] {
        let unique = lock ? Array(Set(hashes)).sorted() : Array(Set(hashes))  // locks taken in one order
        var out: [ContentHash: PackPlace] = [:]
        try SQLBatch.each(unique.count) { range in
            let args: [any SQLArgument] = unique[range].map(\.hex)
            let sql = "SELECT hash, pack, \"offset\", size FROM chunk_packs WHERE hash IN (\(SQLBatch.marks(range.count)))" + (lock ? " ORDER BY hash FOR SHARE" : "")
            for r in try db.rows(sql, args) {
                if let h = try? ContentHash(validating: try r[0] as String) { out[h] = (try r[1], try r[2], try r[3]) }
            }
        }
        return out
    }

    /// Where each packed chunk of `hashes` lies (one read of the index for all of them).
    func places(_ hashes: [ContentHash]) async throws -> [ContentHash: PackPlace] {
        guard !hashes.isEmpty else { return [:] }
        return try await read { db in try Self.places(db, hashes) }
    }

    /// `places` for an upload deciding what to write: in a PostgreSQL index (several servers)
    /// the rows are read `FOR SHARE`, so a collection deleting one of them finishes first and
    /// the upload sees it gone (see `SharedChunkGuard`).
    func placesForUpload(_ hashes: [ContentHash]) async throws -> [ContentHash: PackPlace] {
        guard !hashes.isEmpty else { return [:] }
        guard sqlite == nil else { return try await places(hashes) }
        return try await write { db in try Self.places(db, hashes, lock: true) }
    }

    /// `places` from synchronous code: only for an index in a SQLite file (the folder store's).
    func placesNow(_ hashes: [ContentHash]) throws -> [ContentHash: PackPlace] {
        guard let sqlite else { throw StorageError(.internalError, "a synchronous look-up in a pack index that is not a SQLite file") }
        guard !hashes.isEmpty else { return [:] }
        return try mapped("read") { try sqlite.readNow { db in try Self.places(db, hashes) } }
    }

    /// Records that `chunks` lie at their ranges of the new pack `name` (a chunk indexed already
    /// keeps its place), in one transaction.
    func record(pack name: String, size: Int, _ chunks: [(ContentHash, Range<Int>)]) async throws {
        // In key order: each insert lands next to the one before (a batch's hashes are random).
        let sorted = chunks.sorted(by: { $0.0 < $1.0 })
        try await write { db in
            try db.execute("INSERT INTO pack_sizes (pack, size) VALUES (?, ?) ON CONFLICT (pack) DO UPDATE SET size = excluded.size", [name, size])
            try db.insertMany("INSERT INTO chunk_packs (hash, pack, \"offset\", size)", width: 4, count: sorted.count, suffix: "ON CONFLICT (hash) DO NOTHING") { i in
                [sorted[i].0.hex, name, sorted[i].1.lowerBound, sorted[i].1.count]
            }
        }
    }

    /// Every pack an index row names.
    func packNames() async throws -> Set<String> {
        try await read { db in Set(try db.values("SELECT DISTINCT pack FROM chunk_packs") as [String]) }
    }

    /// Indexed chunks after `after` (hex) in hash order, at most `limit`.
    func page(after: String, limit: Int) async throws -> [StoredChunk] {
        try await read { db in
            try db.rows("SELECT hash, size FROM chunk_packs WHERE hash > ? ORDER BY hash LIMIT ?", [after, max(1, limit)])
                .compactMap { r in (try? ContentHash(validating: try r[0] as String)).map { h in StoredChunk(hash: h, size: (try? r[1] as Int) ?? 0) } }
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
            var byPack: [String: Int64] = [:]
            try SQLBatch.each(texts.count) { range in
                let args: [any SQLArgument] = Array(texts[range])
                for r in try db.rows("DELETE FROM chunk_packs WHERE hash IN (\(SQLBatch.marks(range.count))) RETURNING pack, size", args) {
                    byPack[try r[0], default: 0] += try r[1] as Int64
                }
            }
            for (pack, size) in byPack {
                try db.execute("""
                    INSERT INTO pack_garbage (pack, bytes) VALUES (?, ?) ON CONFLICT (pack) DO UPDATE SET bytes = pack_garbage.bytes + excluded.bytes
                    """, [pack, size])
            }
            return byPack.values.reduce(0, +)
        }
    }

    /// The packs something was forgotten in, with the bytes and chunks still indexed in each.
    func packsWithGarbage() async throws -> [(pack: String, live: Int64, count: Int)] {
        try await read { db in
            try db.rows("""
                SELECT g.pack, coalesce(sum(c.size), 0) AS live, count(c.hash) AS n FROM pack_garbage g LEFT JOIN chunk_packs c ON c.pack = g.pack GROUP BY g.pack
                """).map { (try $0[0], try $0[1], try $0[2]) }
        }
    }

    /// The size `pack` was written with (nil for a pack written before sizes were kept).
    func size(of pack: String) async throws -> Int? {
        try await read { db in try db.value("SELECT size FROM pack_sizes WHERE pack = ?", [pack]) }
    }

    /// The chunks indexed in `pack`, in the order they lie.
    func rows(of pack: String) async throws -> [(hash: String, offset: Int, size: Int)] {
        try await read { db in
            try db.rows("SELECT hash, \"offset\", size FROM chunk_packs WHERE pack = ? ORDER BY \"offset\"", [pack]).map { (try $0[0], try $0[1], try $0[2]) }
        }
    }

    /// Moves `moved` chunks from `old` to their offsets (and sizes: a record may have been
    /// rewritten) in `new` and drops `old`'s garbage note, in one transaction.
    func move(_ moved: [(hash: String, offset: Int, size: Int)], from old: String, to new: String, size: Int) async throws {
        try await write { db in
            try db.execute("INSERT INTO pack_sizes (pack, size) VALUES (?, ?) ON CONFLICT (pack) DO UPDATE SET size = excluded.size", [new, size])
            try db.execute("DELETE FROM pack_sizes WHERE pack = ?", [old])
            for m in moved {
                try db.execute("UPDATE chunk_packs SET pack = ?, \"offset\" = ?, size = ? WHERE hash = ? AND pack = ?", [new, m.offset, m.size, m.hash, old])
            }
            try db.execute("DELETE FROM pack_garbage WHERE pack = ?", [old])
        }
    }

    /// Drops the garbage note of a pack that is gone.
    func dropNote(_ pack: String) async throws {
        try await write { db in
            try db.execute("DELETE FROM pack_garbage WHERE pack = ?", [pack])
            try db.execute("DELETE FROM pack_sizes WHERE pack = ?", [pack])
        }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await mappedAsync("read") { try await database.read(body) }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await mappedAsync("write") { try await database.write(body) }
    }

    private func mapped<T>(_ verb: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as StorageError { throw StorageError(e.code, "cannot \(verb) the chunk index: \(e.message)") }
    }

    private func mappedAsync<T>(_ verb: String, _ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let e as StorageError { throw StorageError(e.code, "cannot \(verb) the chunk index: \(e.message)") }
    }
}
