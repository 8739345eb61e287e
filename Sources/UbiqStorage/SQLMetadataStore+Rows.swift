import Foundation
import UbiqCore

/// Row helpers shared by the item operations. All run inside one transaction.
extension SQLConnection {
    func containerRow(accountID: Int64, name: ContainerID, create: Bool) throws -> Int64? {
        if let id: Int64 = try value("SELECT id FROM containers WHERE account_id = ? AND name = ?", [accountID, name.string]) {
            return id
        }
        guard create else { return nil }
        // Containers are made on first use: an account keeps at most `maxContainersPerAccount`
        // (#45 row 2: they cost rows the quota did not count).
        let held: Int64 = try value("SELECT COUNT(*) FROM containers WHERE account_id = ?", [accountID]) ?? 0
        guard held < SQLMetadataStore.maxContainersPerAccount else {
            throw StorageError(.storageFull, "storage full: the account has \(held) containers, the most it may; '\(name)' is not made")
        }
        return try value("INSERT INTO containers (account_id, name) VALUES (?, ?) RETURNING id", [accountID, name.string])
    }

    func itemRow(container: Int64, uuid: ItemID) throws -> SQLRow? {
        try row("SELECT * FROM items WHERE container_id = ? AND uuid = ?", [container, uuid.description])
    }

    func liveItemRow(container: Int64, path: RelativePath) throws -> SQLRow? {
        try row("SELECT * FROM items WHERE container_id = ? AND path = ? AND deleted_at IS NULL", [container, path.string])
    }

    func requireItemRow(container: Int64?, uuid: ItemID) throws -> SQLRow {
        guard let container, let r = try itemRow(container: container, uuid: uuid) else {
            throw StorageError(.notFound, "no item \(uuid)")
        }
        return r
    }

    /// Inserts a row and returns the key the database gave it (`RETURNING column`).
    func insert(_ sql: String, _ arguments: [any SQLArgument], returning column: String = "id") throws -> Int64 {
        guard let id: Int64 = try value("\(sql) RETURNING \(column)", arguments) else {
            throw StorageError(.storageFailure, "the database gave the new row no \(column)")
        }
        return id
    }

    func versionRecord(_ r: SQLRow) throws -> VersionRecord {
        guard let id = VersionID(string: try r["uuid"]), let dev = DeviceID(string: try r["device_id"]),
              let state = VersionState(rawValue: try r["state"]) else {
            throw StorageError(.storageFailure, "corrupt version row \((try? r["id"] as Int64) ?? -1)")
        }
        return VersionRecord(id: id, state: state, size: try r["size"], hash: try ContentHash(validating: try r["hash"]),
                             modified: Date(timeIntervalSince1970: try r["modified"]), committed: Date(timeIntervalSince1970: try r["committed"]),
                             device: dev, deviceName: try r["device_name"], uploaded: try r["uploaded"], permissions: try r["permissions"],
                             base: (try r["base"] as String?).flatMap(VersionID.init(string:)), sealed: try r["sealed"])
    }

    /// An item from a row of `SQLQueries.itemRecordColumns` starting at column `o` (columns read by position).
    func itemRecord(joined r: SQLRow, at o: Int = 0) throws -> ItemRecord {
        let rowID: Int64 = try r[o]
        guard let id = ItemID(string: try r[o + 1]), let kind = ItemKind(rawValue: try r[o + 3]) else {
            throw StorageError(.storageFailure, "corrupt item row \(rowID)")
        }
        var current: VersionRecord?
        if let vid: String = try r[o + 6] {
            guard let v = VersionID(string: vid), let state = VersionState(rawValue: try r[o + 7]), let dev = DeviceID(string: try r[o + 12]) else {
                throw StorageError(.storageFailure, "corrupt current version of item row \(rowID)")
            }
            current = VersionRecord(id: v, state: state, size: try r[o + 8], hash: try ContentHash(validating: try r[o + 9]),
                                    modified: Date(timeIntervalSince1970: try r[o + 10]), committed: Date(timeIntervalSince1970: try r[o + 11]),
                                    device: dev, deviceName: try r[o + 13], uploaded: try r[o + 14], permissions: try r[o + 17], sealed: try r[o + 18])
        }
        let deleted: Double? = try r[o + 4]
        let created: Double? = try r[o + 16]
        return ItemRecord(id: id, path: try RelativePath(validating: try r[o + 2]), kind: kind, current: current,
                          conflictCount: try r[o + 15], deletedAt: deleted.map { Date(timeIntervalSince1970: $0) }, changeSeq: try r[o + 5],
                          created: created.map { Date(timeIntervalSince1970: $0) })
    }

    /// The item whose `items` row is `r`, as it stands now.
    func itemRecord(_ r: SQLRow) throws -> ItemRecord {
        try itemRecord(rowID: try r["id"])
    }

    func itemRecord(rowID: Int64) throws -> ItemRecord {
        let sql = "SELECT \(SQLQueries.itemRecordColumns) FROM items i LEFT JOIN versions v ON v.id = i.current_version WHERE i.id = ?"
        guard let r = try row(sql, [rowID]) else {
            throw StorageError(.notFound, "item vanished")
        }
        return try itemRecord(joined: r)
    }

    /// Appends the item to the container's change journal (keeping one entry per item) and returns the new cursor.
    func journal(container: Int64, item: Int64) throws -> Int64 {
        try execute("DELETE FROM changes WHERE item_id = ?", [item])
        let seq = try insert("INSERT INTO changes (container_id, item_id) VALUES (?, ?)", [container, item], returning: "seq")
        try execute("UPDATE items SET seq = ? WHERE id = ?", [seq, item])
        return seq
    }

    /// True if the account has uploaded the chunk (the one ownership query every path uses).
    func ownsChunk(accountID: Int64, hash: ContentHash) throws -> Bool {
        try row("SELECT 1 FROM account_chunks WHERE account_id = ? AND hash = ?", [accountID, hash.hex]) != nil
    }

    /// Whether the account holds the chunk, and its quota and usage, in one statement (nil: no
    /// such account).
    func standing(accountID: Int64, hash: ContentHash) throws -> (owned: Bool, quota: Int64, used: Int64)? {
        guard let a = try row("SELECT quota, used, EXISTS (SELECT 1 FROM account_chunks WHERE account_id = ? AND hash = ?) AS owned FROM accounts WHERE id = ?",
                              [accountID, hash.hex, accountID]) else { return nil }
        return (try a["owned"], try a["quota"], try a["used"])
    }

    /// The hashes the account does not hold, deduplicated, in the given order. Asked in lists
    /// of up to `SQLBatch.rows` (`IN (…)`): a 32,000-chunk manifest is 125 queries, not 32,000.
    func missingHashes(accountID: Int64, _ hashes: [ContentHash]) throws -> [ContentHash] {
        var seen = Set<ContentHash>()
        let unique = hashes.filter { seen.insert($0).inserted }
        let owned = try present("SELECT hash FROM account_chunks WHERE account_id = ? AND hash", accountID, unique.map(\.hex))
        return unique.filter { !owned.contains($0.hex) }
    }

    /// The chunks of `manifest` the account does not hold (deduplicated, in manifest order).
    func missingChunks(accountID: Int64, manifest: Manifest) throws -> [ChunkRef] {
        let missing = Set(try missingHashes(accountID: accountID, manifest.chunks.map(\.hash)))
        return manifest.distinctChunks { missing.contains($0) }
    }

    func versionChunkHashes(version: Int64) throws -> [ContentHash] {
        try (values("SELECT hash FROM version_chunks WHERE version_id = ? ORDER BY idx", [version]) as [String]).map(ContentHash.init(validating:))
    }

    /// Which of `values` the query `sql` — ending in the column compared, `… AND column` —
    /// finds with its one other argument `first`, asked in lists of up to `SQLBatch.rows`.
    func present(_ sql: String, _ first: Int64, _ values: [String]) throws -> Set<String> {
        let unique = Array(Set(values))
        var found = Set<String>()
        try SQLBatch.each(unique.count) { range in
            var args: [any SQLArgument] = [first]
            args.reserveCapacity(range.count + 1)
            for v in unique[range] { args.append(v) }
            for text in try self.values("\(sql) IN (\(SQLBatch.marks(range.count)))", args) as [String] { found.insert(text) }
        }
        return found
    }

    /// Inserts `count` rows of `width` values each (`row(i)` gives row `i`'s), up to
    /// `SQLBatch.rows` a statement: one round trip to a PostgreSQL server per 256 rows, not per
    /// row. `prefix` is `INSERT INTO table (columns…)`; `suffix` follows the rows (`ON CONFLICT …`).
    func insertMany(_ prefix: String, width: Int, count: Int, suffix: String = "", _ row: (Int) -> [any SQLArgument]) throws {
        let tuple = "(" + SQLBatch.marks(width) + ")"
        try SQLBatch.each(count) { range in
            var args: [any SQLArgument] = []
            args.reserveCapacity(range.count * width)
            for i in range { args += row(i) }
            try execute("\(prefix) VALUES \(repeatElement(tuple, count: range.count).joined(separator: ", ")) \(suffix)", args)
        }
    }

    /// Clears the deleted mark of every deleted folder item that is an ancestor of `path`
    /// and whose path is free, so a revived item never sits in a deleted folder.
    /// - Parameter known: folders already seen live (with all their ancestors) in this
    ///   transaction, where nothing can make them not live again (a commit batch).
    /// - Returns: true if it revived any folder.
    @discardableResult
    func reviveAncestors(container: Int64, of path: RelativePath, known: LiveFolders? = nil) throws -> Bool {
        // Usually every ancestor is live: one query says so (and, when not, which are not).
        var ancestors: [String] = []  // the nearest first
        var a = path.parent
        while let x = a { ancestors.append(x.string); a = x.parent }
        if ancestors.isEmpty { return false }
        if let known, known.paths.contains(ancestors[0]) { return false }
        let live = Set(try values("SELECT path FROM items WHERE container_id = ? AND deleted_at IS NULL AND path IN (\(SQLBatch.marks(ancestors.count)))",
                                  [container as any SQLArgument] + ancestors.map { $0 as any SQLArgument }) as [String])
        if live.count == ancestors.count { known?.paths.insert(ancestors[0]); return false }
        // The newest deleted folder at each of the others, all in one query through the index of
        // deleted paths (`items_deleted_path`; one round trip on PostgreSQL, not two an
        // ancestor), revived the nearest first.
        let gone = ancestors.filter { !live.contains($0) }
        var newest: [String: (at: Double, id: Int64)] = [:]
        for r in try rows(SQLQueries.deletedFolders(gone.count), [container as any SQLArgument] + gone.map { $0 as any SQLArgument }) {
            let p: String = try r["path"], found: (at: Double, id: Int64) = (try r["deleted_at"], try r["id"])
            if let n = newest[p], (n.at, n.id) > (found.at, found.id) { continue }
            newest[p] = found
        }
        var revived = false
        for ancestor in gone {
            guard let id = newest[ancestor]?.id else { continue }
            try execute("UPDATE items SET deleted_at = NULL, trash_group = NULL WHERE id = ?", [id])
            _ = try journal(container: container, item: id)
            revived = true
        }
        return revived
    }

    /// Adds to an account's count of entries (`ChunkReferenceBudget`: chunk references and versions).
    func addChunkReferences(_ n: Int64, account: Int64) throws {
        guard n != 0 else { return }
        try execute("UPDATE accounts SET refs = refs + ? WHERE id = ?", [n, account])
    }
}

/// Statement text shared by several operations.
enum SQLQueries {
    /// Every account's entries counted afresh (`ChunkReferenceBudget`): its versions' (chunk
    /// references and one for the version) and one for each folder not purged. Both dialects.
    static let recountEntries = """
        UPDATE accounts SET refs =
            COALESCE((SELECT SUM(v.refs) FROM versions v JOIN containers c ON c.id = v.container_id WHERE c.account_id = accounts.id), 0)
            + (SELECT COUNT(*) FROM items i JOIN containers c ON c.id = i.container_id
               WHERE c.account_id = accounts.id AND i.kind = 'folder' AND (i.deleted_at IS NULL OR i.trash_group IS NOT NULL))
        """

    /// The columns `itemRecord(joined:)` reads, for a query over `items i`: the item, its
    /// current version (LEFT JOIN `versions v` on `v.id = i.current_version`), its conflict count
    /// and its first version's date. One statement per item instead of four.
    static let itemRecordColumns = """
        i.id, i.uuid, i.path, i.kind, i.deleted_at, i.seq,
        v.uuid, v.state, v.size, v.hash, v.modified, v.committed, v.device_id, v.device_name, v.uploaded,
        (SELECT COUNT(*) FROM versions x WHERE x.item_id = i.id AND x.state = 'conflict'),
        (SELECT MIN(y.modified) FROM versions y WHERE y.item_id = i.id),
        v.permissions, v.sealed
        """

    /// Live items under a folder (container, then the bounds from `under`): a range of the
    /// live-path index, not a look at every live item of the container.
    static let liveUnder = "container_id = ? AND deleted_at IS NULL AND path > ? AND path < ?"

    /// The arguments of `liveUnder` for the items under `folder`: in byte order, the paths
    /// that start with `folder/` are exactly those after `folder/` and before `folder0`
    /// (`0` is the byte after `/`). PostgreSQL compares paths byte by byte too (`COLLATE "C"`).
    static func under(_ container: Int64, _ folder: RelativePath) -> [any SQLArgument] {
        [container, folder.string + "/", folder.string + "0"]
    }

    /// The deleted folders at `count` paths (container, then the paths), asked through the index
    /// of deleted paths (`items_deleted_path`); the newest at each is picked by the caller.
    static func deletedFolders(_ count: Int) -> String {
        "SELECT id, path, deleted_at FROM items WHERE container_id = ? AND path IN (\(SQLBatch.marks(count))) AND kind = 'folder' AND deleted_at IS NOT NULL"
    }

}

/// Folders known to be live (with all their ancestors) during one commit batch: the batch only
/// creates and revives, so later files in the same folders skip the check.
final class LiveFolders {
    var paths: Set<String> = []
}

/// Statements over many rows at once: a list of up to `rows` placeholders per statement (each
/// length's statement cached by the connection: a commit of one small file asks for one or two).
enum SQLBatch {
    static let rows = 256

    /// Calls `body` with consecutive ranges of at most `rows` indices covering `0..<count`.
    static func each(_ count: Int, _ body: (Range<Int>) throws -> Void) rethrows {
        var start = 0
        while start < count {
            let end = min(count, start + rows)
            try body(start..<end)
            start = end
        }
    }

    /// `n` placeholders separated by commas.
    static func marks(_ n: Int) -> String { repeatElement("?", count: n).joined(separator: ", ") }

    /// `rows` parenthesized groups of `width` placeholders (a multi-row VALUES list).
    static func tuples(_ width: Int, _ rows: Int) -> String {
        repeatElement("(" + marks(width) + ")", count: rows).joined(separator: ", ")
    }
}
