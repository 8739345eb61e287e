import Foundation
import UbiqCore

extension SQLMetadataStore: ItemStore {
    public func commit(_ ctx: AuthContext, container: ContainerID, _ input: CommitInput, now: Date) async throws -> CommitResult {
        try await write(account: ctx.accountID) { db in
            guard let c = try db.containerRow(accountID: ctx.accountID, name: container, create: true) else { throw StorageError(.internalError, "no container") }
            return try self.commitOne(db, ctx, container: c, input, now: now)
        }
    }

    public func commitMany(_ ctx: AuthContext, container: ContainerID, _ inputs: [CommitInput], now: Date) async throws -> [Result<CommitResult, StorageError>] {
        try await write(account: ctx.accountID) { db in
            guard let c = try db.containerRow(accountID: ctx.accountID, name: container, create: true) else { throw StorageError(.internalError, "no container") }
            var results = [Result<CommitResult, StorageError>?](repeating: nil, count: inputs.count)
            let batch = try CommitBatch(db, account: ctx.accountID, container: c, inputs: inputs)
            // New files wait to be written together; anything else writes them first.
            var newFiles = NewFiles()
            func writeNewFiles() throws {
                for (i, r) in try newFiles.write(db, ctx, container: c, now: now) { results[i] = .success(r) }
            }
            for (i, input) in inputs.enumerated() {
                if newFiles.take(input, index: i, batch: batch) { continue }
                try writeNewFiles()
                var outcome: Result<CommitResult, StorageError>!
                try db.savepoint {
                    do {
                        outcome = .success(try self.commitOne(db, ctx, container: c, input, now: now, batch: batch))
                        return true
                    } catch let e as StorageError {
                        outcome = .failure(e)
                        return false
                    }
                }
                batch.record(input, outcome)
                results[i] = outcome
            }
            try writeNewFiles()
            try db.addChunkReferences(batch.refsAdded, account: ctx.accountID)
            return results.map { $0! }
        }
    }

    /// - Parameter batch: the look-ups of the batch this commit is part of, if any.
    func commitOne(_ db: any SQLConnection, _ ctx: AuthContext, container c: Int64, _ input: CommitInput, now: Date,
                   batch: CommitBatch? = nil) throws -> CommitResult {
        // A retried commit (same version ID) is answered with what the first attempt did.
        if batch?.versionIsNew(input.versionID) != true, let vr = try db.row("SELECT * FROM versions WHERE container_id = ? AND uuid = ?", [c, input.versionID.description]) {
            let item = try db.itemRecord(rowID: try vr["item_id"])
            let missing = try input.manifest.map { try db.missingChunks(accountID: ctx.accountID, manifest: $0).map(\.hash) } ?? []
            return CommitResult(outcome: .unchanged, item: item, version: try db.versionRecord(vr), missing: missing, cursor: item.changeSeq)
        }
        switch input.kind {
        case .folder: return try commitFolder(db, ctx, container: c, input, batch: batch)
        case .file: return try commitFile(db, ctx, container: c, input, now: now, batch: batch)
        }
    }

    public func complete(_ ctx: AuthContext, container: ContainerID, version: VersionID, now: Date) async throws -> ItemChange {
        try await write(account: ctx.accountID) { db in
            guard let c = try db.containerRow(accountID: ctx.accountID, name: container, create: false),
                  let vr = try db.row("SELECT * FROM versions WHERE container_id = ? AND uuid = ?", [c, version.description])
            else { throw StorageError(.notFound, "no version \(version)") }
            let itemID: Int64 = try vr["item_id"]
            if try vr["uploaded"] as Bool {
                let item = try db.itemRecord(rowID: itemID)
                return ItemChange(item: item, cursor: item.changeSeq)
            }
            let missing = try db.missingHashes(accountID: ctx.accountID, try db.versionChunkHashes(version: try vr["id"]))
            guard missing.isEmpty else {
                throw StorageError(.incompleteContent, "\(Counted.of(missing.count, "chunk")) of version \(version) not uploaded yet", missing: missing)
            }
            try db.execute("UPDATE versions SET uploaded = 1 WHERE id = ?", [try vr["id"] as Int64])
            let seq = try db.journal(container: c, item: itemID)
            return ItemChange(item: try db.itemRecord(rowID: itemID), cursor: seq)
        }
    }

    public func move(_ ctx: AuthContext, container: ContainerID, item: ItemID, to path: RelativePath, now: Date) async throws -> ItemChange {
        try await move(ctx, container: container, item: item, to: path, into: nil, now: now)
    }

    public func move(_ ctx: AuthContext, container: ContainerID, item: ItemID, to path: RelativePath, into parentID: ItemID?, now: Date) async throws -> ItemChange {
        try await write(account: ctx.accountID) { db in
            let c = try db.containerRow(accountID: ctx.accountID, name: container, create: false)
            let r = try db.requireItemRow(container: c, uuid: item)
            guard let c, (try r["deleted_at"] as Double?) == nil else { throw StorageError(.notFound, "item \(item) is in the trash") }
            let id: Int64 = try r["id"]
            let old = try RelativePath(validating: try r["path"])
            if old == path { return ItemChange(item: try db.itemRecord(r), cursor: try r["seq"]) }
            let isFolder = (try r["kind"] as String) == ItemKind.folder.rawValue
            if isFolder && path.isSelfOrDescendant(of: old) { throw StorageError(.invalidPath, "cannot move a folder into itself") }
            if let other = try db.liveItemRow(container: c, path: path), (try other["id"] as Int64) != id {
                throw StorageError(.pathExists, "'\(path)' already exists")
            }
            var descendants: [SQLRow] = []
            if isFolder {
                descendants = try db.rows("SELECT id, path FROM items WHERE \(SQLQueries.liveUnder) ORDER BY path", SQLQueries.under(c, old))
                if try db.row("SELECT 1 FROM items WHERE \(SQLQueries.liveUnder) LIMIT 1", SQLQueries.under(c, path)) != nil {
                    throw StorageError(.pathExists, "items already exist under '\(path)'")
                }
            }
            // `parentID` (a sync engine's move): the live folder at the new parent path must be
            // that item; a device whose view of the folders is out of date never lands an item
            // in another folder of the same name, nor brings back a deleted one by its path.
            if let parentID, let parent = path.parent {
                guard let p = try db.liveItemRow(container: c, path: parent), (try p["kind"] as String) == ItemKind.folder.rawValue,
                      (try p["uuid"] as String).lowercased() == parentID.description.lowercased() else {
                    throw StorageError(.itemChanged, "'\(parent)' is not the folder \(parentID) any more")
                }
            }
            try db.execute("UPDATE items SET path = ? WHERE id = ?", [path.string, id])
            var seq = try db.journal(container: c, item: id)
            for d in descendants {
                let dp = try RelativePath(validating: try d["path"]).rebased(from: old, to: path)
                try db.execute("UPDATE items SET path = ? WHERE id = ?", [dp.string, try d["id"] as Int64])
                seq = try db.journal(container: c, item: try d["id"])
            }
            try db.reviveAncestors(container: c, of: path)
            return ItemChange(item: try db.itemRecord(rowID: id), cursor: seq)
        }
    }

    public func delete(_ ctx: AuthContext, container: ContainerID, item: ItemID, now: Date) async throws -> ItemChange {
        try await delete(ctx, container: container, item: item, unchangedSince: nil, now: now)
    }

    public func delete(_ ctx: AuthContext, container: ContainerID, item: ItemID, unchangedSince: Int64, now: Date) async throws -> ItemChange {
        try await delete(ctx, container: container, item: item, unchangedSince: Optional(unchangedSince), now: now)
    }

    func delete(_ ctx: AuthContext, container: ContainerID, item: ItemID, unchangedSince: Int64?, now: Date) async throws -> ItemChange {
        try await write(account: ctx.accountID) { db in
            let c = try db.containerRow(accountID: ctx.accountID, name: container, create: false)
            let r = try db.requireItemRow(container: c, uuid: item)
            guard let c else { throw StorageError(.notFound, "no item \(item)") }
            let id: Int64 = try r["id"]
            if (try r["deleted_at"] as Double?) != nil { return ItemChange(item: try db.itemRecord(r), cursor: try r["seq"]) }
            if let since = unchangedSince {
                var changed = (try r["seq"] as Int64) > since
                let kind: String = try r["kind"]
                if !changed && kind == ItemKind.folder.rawValue {
                    var args = SQLQueries.under(c, try RelativePath(validating: try r["path"]))
                    args += [since]
                    changed = try db.row("SELECT 1 FROM items WHERE \(SQLQueries.liveUnder) AND seq > ? LIMIT 1", args) != nil
                }
                if changed { throw StorageError(.itemChanged, "\(try r["path"] as String) changed after change \(since)") }
            }
            let group = item.description
            let t = now.timeIntervalSince1970
            try db.execute("UPDATE items SET deleted_at = ?, trash_group = ? WHERE id = ?", [t, group, id])
            var seq = try db.journal(container: c, item: id)
            if (try r["kind"] as String) == ItemKind.folder.rawValue {
                let path: String = try r["path"]
                let ids: [Int64] = try db.values("SELECT id FROM items WHERE \(SQLQueries.liveUnder) ORDER BY path",
                                                 SQLQueries.under(c, try RelativePath(validating: path)))
                for d in ids {
                    try db.execute("UPDATE items SET deleted_at = ?, trash_group = ? WHERE id = ?", [t, group, d])
                    seq = try db.journal(container: c, item: d)
                }
            }
            return ItemChange(item: try db.itemRecord(rowID: id), cursor: seq)
        }
    }

    public func restore(_ ctx: AuthContext, container: ContainerID, item: ItemID, now: Date) async throws -> ItemChange {
        try await write(account: ctx.accountID) { db in
            let c = try db.containerRow(accountID: ctx.accountID, name: container, create: false)
            let r = try db.requireItemRow(container: c, uuid: item)
            guard let c else { throw StorageError(.notFound, "no item \(item)") }
            let id: Int64 = try r["id"]
            guard (try r["deleted_at"] as Double?) != nil else { return ItemChange(item: try db.itemRecord(r), cursor: try r["seq"]) }
            guard (try r["trash_group"] as String?) != nil else {
                throw StorageError(.notFound, "\(try r["path"] as String) was purged from the trash (items stay there \(Int(TrashPolicy.keepAge / 86_400)) days)")
            }
            let old = try RelativePath(validating: try r["path"])
            var target = old
            var n = 1
            while try db.liveItemRow(container: c, path: target) != nil {
                target = try Self.restoredName(old, attempt: n)
                n += 1
            }
            let group: String? = try r["trash_group"]
            try db.execute("UPDATE items SET deleted_at = NULL, trash_group = NULL, path = ? WHERE id = ?", [target.string, id])
            var seq = try db.journal(container: c, item: id)
            if let group, (try r["kind"] as String) == ItemKind.folder.rawValue {
                let rows = try db.rows("SELECT id, path FROM items WHERE container_id = ? AND trash_group = ? AND id != ? ORDER BY id", [c, group, id])
                for d in rows {
                    // Only what was under this folder (a folder restored from inside a bigger
                    // deletion brings back its own contents, not its siblings).
                    let p = try RelativePath(validating: try d["path"])
                    guard p.isSelfOrDescendant(of: old) else { continue }
                    let dp = p.rebased(from: old, to: target)
                    if try db.liveItemRow(container: c, path: dp) != nil { continue }
                    try db.execute("UPDATE items SET deleted_at = NULL, trash_group = NULL, path = ? WHERE id = ?", [dp.string, try d["id"] as Int64])
                    seq = try db.journal(container: c, item: try d["id"])
                }
            }
            try db.reviveAncestors(container: c, of: target)
            return ItemChange(item: try db.itemRecord(rowID: id), cursor: seq)
        }
    }

    /// `notes.txt` → `notes (restored).txt`, then `notes (restored 2).txt`, …
    /// A name longer than a folder holds is an encrypted account's sealed token (a device opens
    /// it and adds the suffix to the real name): the suffix goes after it whole. A name a folder
    /// holds is cut to keep fitting one — a sealed token that short (at most 235 characters: no
    /// token is 236 to 255 long) never needs the cut.
    static func restoredName(_ path: RelativePath, attempt: Int) throws -> RelativePath {
        let suffix = attempt == 1 ? " (restored)" : " (restored \(attempt))"
        let long = path.name.utf8.count > RelativePath.maxNameBytes
        let newName = RelativePath.suffixed(path.name, suffix, limit: long ? RelativePath.maxStoredNameBytes : RelativePath.maxNameBytes)
        return try path.parent.map { try $0.appending(newName) } ?? RelativePath(validating: newName)
    }

    public func versions(_ ctx: AuthContext, container: ContainerID, item: ItemID) async throws -> VersionList {
        try await read { db in
            let c = try db.containerRow(accountID: ctx.accountID, name: container, create: false)
            let r = try db.requireItemRow(container: c, uuid: item)
            let all = try db.rows("SELECT * FROM versions WHERE item_id = ? ORDER BY committed DESC, id DESC", [try r["id"] as Int64])
                .map { try db.versionRecord($0) }
            return VersionList(item: try db.itemRecord(r), current: all.first { $0.state == .current },
                               conflicts: all.filter { $0.state == .conflict }, others: all.filter { $0.state == .other })
        }
    }

    public func resolve(_ ctx: AuthContext, container: ContainerID, item: ItemID, keep: VersionID, now: Date) async throws -> ItemChange {
        try await write(account: ctx.accountID) { db in
            let c = try db.containerRow(accountID: ctx.accountID, name: container, create: false)
            let r = try db.requireItemRow(container: c, uuid: item)
            guard let c else { throw StorageError(.notFound, "no item \(item)") }
            guard (try r["deleted_at"] as Double?) == nil else { throw StorageError(.notFound, "item \(item) is in the trash; restore it first") }
            let id: Int64 = try r["id"]
            guard let v = try db.row("SELECT id, uploaded FROM versions WHERE item_id = ? AND uuid = ?", [id, keep.description]) else {
                throw StorageError(.notFound, "item \(item) has no version \(keep)")
            }
            guard try v["uploaded"] as Bool else { throw StorageError(.incompleteContent, "version \(keep) has not finished uploading") }
            let vid: Int64 = try v["id"]
            try db.execute("UPDATE versions SET state = 'other' WHERE item_id = ? AND state IN ('current', 'conflict') AND id != ?", [id, vid])
            try db.execute("UPDATE versions SET state = 'current', committed = ? WHERE id = ?", [now.timeIntervalSince1970, vid])
            try db.execute("UPDATE items SET current_version = ? WHERE id = ?", [vid, id])
            try self.pruneHistory(db, item: id, now: now)
            let seq = try db.journal(container: c, item: id)
            return ItemChange(item: try db.itemRecord(rowID: id), cursor: seq)
        }
    }

    public func manifest(_ ctx: AuthContext, container: ContainerID, version: VersionID) async throws -> Manifest {
        try await read { db in
            guard let c = try db.containerRow(accountID: ctx.accountID, name: container, create: false),
                  let vr = try db.row("SELECT id, size, hash FROM versions WHERE container_id = ? AND uuid = ?", [c, version.description])
            else { throw StorageError(.notFound, "no version \(version)") }
            let chunks = try db.rows("SELECT hash, size FROM version_chunks WHERE version_id = ? ORDER BY idx", [try vr["id"] as Int64])
                .map { ChunkRef(hash: try ContentHash(validating: try $0["hash"]), size: try $0["size"]) }
            return Manifest(chunks: chunks, size: try vr["size"], hash: try ContentHash(validating: try vr["hash"]))
        }
    }

    public func manifests(_ ctx: AuthContext, container: ContainerID, versions: [VersionID]) async throws -> [Manifest] {
        try await read { db in
            guard let c = try db.containerRow(accountID: ctx.accountID, name: container, create: false) else { throw StorageError(.notFound, "no container \(container)") }
            var total = 0
            return try versions.map { v in
                guard let vr = try db.row("SELECT id, size, hash FROM versions WHERE container_id = ? AND uuid = ?", [c, v.description]) else { throw StorageError(.notFound, "no version \(v)") }
                let refs = try db.rows("SELECT hash, size FROM version_chunks WHERE version_id = ? ORDER BY idx", [try vr["id"] as Int64]).map { ChunkRef(hash: try ContentHash(validating: try $0["hash"]), size: try $0["size"]) }
                // One answer holds at most one big file's worth of chunk references.
                total += refs.count
                guard total <= 1_000_000 else { throw StorageError(.invalidRequest, "the manifests asked for hold more than 1,000,000 chunks; ask for fewer at once") }
                return Manifest(chunks: refs, size: try vr["size"], hash: try ContentHash(validating: try vr["hash"]))
            }
        }
    }

    public func changes(_ ctx: AuthContext, container: ContainerID, after cursor: Int64, limit: Int) async throws -> ChangePage {
        try await read { db in
            guard let c = try db.containerRow(accountID: ctx.accountID, name: container, create: false) else {
                return ChangePage(items: [], cursor: max(0, cursor), hasMore: false)
            }
            if cursor > 0, let horizon: Int64 = try db.value("SELECT horizon FROM containers WHERE id = ?", [c]), cursor < horizon {
                throw StorageError(.cursorExpired, "deletes after change \(cursor) were forgotten (the account keeps its newest \(self.deletesKept.load(ordering: .relaxed))); read the whole feed again")
            }
            // One statement for the page: journal entries joined with their items as they stand now.
            let sql = """
                SELECT c.seq, \(SQLQueries.itemRecordColumns) FROM changes c JOIN items i ON i.id = c.item_id
                LEFT JOIN versions v ON v.id = i.current_version
                WHERE c.container_id = ? AND c.seq > ? ORDER BY c.seq LIMIT ?
                """
            var items: [ItemRecord] = []
            var last = cursor, more = false
            for r in try db.rows(sql, [c, cursor, limit + 1]) {
                if items.count == limit { more = true; break }
                items.append(try db.itemRecord(joined: r, at: 1))
                last = try r[0]
            }
            return ChangePage(items: items, cursor: last, hasMore: more)
        }
    }

    public func trash(_ ctx: AuthContext, container: ContainerID) async throws -> [ItemRecord] {
        try await read { db in
            guard let c = try db.containerRow(accountID: ctx.accountID, name: container, create: false) else { return [] }
            // Every restorable item: each deletion's head, and what a deleted folder held (listed
            // after its folder), so a user finds any file to bring back.
            return try db.rows("SELECT * FROM items WHERE container_id = ? AND deleted_at IS NOT NULL AND trash_group IS NOT NULL ORDER BY deleted_at DESC, trash_group, path",
                           [c]).map { try db.itemRecord($0) }
        }
    }
}
