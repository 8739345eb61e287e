import Foundation
import UbiqCore

extension SQLMetadataStore {
    static func validate(_ manifest: Manifest) throws {
        guard manifest.chunks.count <= 1_000_000 else { throw StorageError(.invalidRequest, "manifest has too many chunks") }
        if let bad = manifest.chunks.first(where: { !$0.hasPlausibleSize }) {
            throw StorageError(.invalidRequest, "chunk size \(bad.size) out of range")
        }
        guard Manifest.checkedSize(of: manifest.chunks) == manifest.size else {
            throw StorageError(.invalidRequest, "manifest chunk sizes do not add up to \(manifest.size)")
        }
        guard manifest.hash == Manifest.contentHash(of: manifest.chunks) else {
            throw StorageError(.hashMismatch, "the file's hash \(manifest.hash) is not that of its chunk list")
        }
    }

    func commitFolder(_ db: any SQLConnection, _ ctx: AuthContext, container c: Int64, _ input: CommitInput, batch: CommitBatch? = nil) throws -> CommitResult {
        if batch?.itemIsNew(input.itemID) != true, let r = try db.itemRow(container: c, uuid: input.itemID) {
            let id: Int64 = try r["id"]
            guard (try r["kind"] as String) == ItemKind.folder.rawValue else { throw StorageError(.invalidRequest, "item \(input.itemID) is a file") }
            if (try r["deleted_at"] as Double?) != nil {
                let path = try RelativePath(validating: try r["path"])
                if let live = try db.liveItemRow(container: c, path: path) {
                    guard (try live["kind"] as String) == ItemKind.folder.rawValue else { throw StorageError(.pathExists, "'\(path)' is taken") }
                    // Another folder took the path meanwhile: the device's folder is that one
                    // (one folder a path, as for two new folders at one path).
                    return CommitResult(outcome: .unchanged, item: try db.itemRecord(live), version: nil, missing: [], cursor: try live["seq"])
                }
                try db.execute("UPDATE items SET deleted_at = NULL, trash_group = NULL WHERE id = ?", [id])
                try db.reviveAncestors(container: c, of: path)
                let seq = try db.journal(container: c, item: id)
                return CommitResult(outcome: .revived, item: try db.itemRecord(rowID: id), version: nil, missing: [], cursor: seq)
            }
            return CommitResult(outcome: .unchanged, item: try db.itemRecord(r), version: nil, missing: [], cursor: try r["seq"])
        }
        try checkParent(db, container: c, input, batch: batch)
        if batch?.pathIsFree(input.path) != true, let live = try db.liveItemRow(container: c, path: input.path) {
            guard (try live["kind"] as String) == ItemKind.folder.rawValue else {
                throw StorageError(.pathExists, "a file already exists at '\(input.path)'")
            }
            return CommitResult(outcome: .unchanged, item: try db.itemRecord(live), version: nil, missing: [], cursor: try live["seq"])
        }
        // A folder costs an entry (counted by the database's trigger as the row goes in; a
        // batch's file entries not yet written are added here).
        if let a = try db.row("SELECT quota, refs FROM accounts WHERE id = ?", [ctx.accountID]),
           let refused = ChunkReferenceBudget.refusal(held: (try a["refs"] as Int64) + (batch?.refsAdded ?? 0), adding: ChunkReferenceBudget.folderCost, quota: try a["quota"]) {
            throw refused
        }
        let id = try db.insert("INSERT INTO items (container_id, uuid, path, kind, created) VALUES (?, ?, ?, 'folder', ?)", [c, input.itemID.description, input.path.string, input.modified.timeIntervalSince1970])
        if try db.reviveAncestors(container: c, of: input.path) { batch?.invalidate() }
        let seq = try db.journal(container: c, item: id)
        return CommitResult(outcome: .created, item: try db.itemRecord(rowID: id), version: nil, missing: [], cursor: seq)
    }

    /// A new item's `parent` (see `CommitRequest.parent`): the live folder at the path's parent
    /// must be that item. None there: the item must not be one the server moved or deleted (a
    /// folder the server has never seen is the device's own new folder, made with the item).
    func checkParent(_ db: any SQLConnection, container c: Int64, _ input: CommitInput, batch: CommitBatch?) throws {
        guard let parentID = input.parent, let parent = input.path.parent else { return }
        if batch?.folderChecked(parent, is: parentID) == true { return }
        if let p = try db.liveItemRow(container: c, path: parent) {
            guard (try p["kind"] as String) == ItemKind.folder.rawValue, (try p["uuid"] as String).lowercased() == parentID.description.lowercased() else {
                throw StorageError(.itemChanged, "'\(parent)' is not the folder \(parentID) any more")
            }
            batch?.noteFolder(parent, is: parentID)
        } else if try db.itemRow(container: c, uuid: parentID) != nil {
            throw StorageError(.itemChanged, "the folder \(parentID) is no longer at '\(parent)'")
        }
    }

    func snapshot(_ db: any SQLConnection, item r: SQLRow) throws -> ItemSnapshot {
        let id: Int64 = try r["id"]
        var current: (VersionID, ContentHash)?
        var unfinishedBy: DeviceID?
        if let cv: Int64 = try r["current_version"],
           let v = try db.row("SELECT uuid, hash, uploaded, device_id FROM versions WHERE id = ?", [cv]),
           let vid = VersionID(string: try v["uuid"]) {
            current = (vid, try ContentHash(validating: try v["hash"]))
            if !(try v["uploaded"] as Bool) { unfinishedBy = (try v["device_id"] as String?).flatMap(DeviceID.init(string:)) }
        }
        var conflicts: [VersionID: ContentHash] = [:]
        for v in try db.rows("SELECT uuid, hash FROM versions WHERE item_id = ? AND state = 'conflict'", [id]) {
            if let vid = VersionID(string: try v["uuid"]) { conflicts[vid] = try ContentHash(validating: try v["hash"]) }
        }
        return ItemSnapshot(currentVersion: current?.0, currentHash: current?.1, conflictHashes: conflicts,
                            isDeleted: (try r["deleted_at"] as Double?) != nil, currentUnfinishedBy: unfinishedBy)
    }

    func insertVersion(_ db: any SQLConnection, _ ctx: AuthContext, container c: Int64, item: Int64, state: VersionState,
                       input: CommitInput, manifest: Manifest, uploaded: Bool, now: Date, batch: CommitBatch?) throws -> Int64 {
        let v = try db.insert("""
            INSERT INTO versions (item_id, container_id, uuid, state, size, hash, modified, committed, device_id, device_name, uploaded, permissions, refs, base, sealed)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [item, c, input.versionID.description, state.rawValue, manifest.size, manifest.hash.hex,
                             input.modified.timeIntervalSince1970, now.timeIntervalSince1970, ctx.deviceID.description, ctx.deviceName, uploaded,
                             input.permissions, ChunkReferenceBudget.cost(of: manifest), input.base?.description, input.sealed])
        // The account's count of entries: a batch writes its total once, at its end.
        let cost = ChunkReferenceBudget.cost(of: manifest)
        if let batch { batch.addRefs(cost) } else { try db.addChunkReferences(Int64(cost), account: ctx.accountID) }
        try db.insertMany("INSERT INTO version_chunks (version_id, idx, hash, size)", width: 4, count: manifest.chunks.count) { i in
            [v, i, manifest.chunks[i].hash.hex, manifest.chunks[i].size]
        }
        return v
    }

    /// Drops history versions beyond the policy (the newest 20 and anything younger than 30 days stay).
    func pruneHistory(_ db: any SQLConnection, item: Int64, now: Date) throws {
        let rows = try db.rows("SELECT id, uuid, committed FROM versions WHERE item_id = ? AND state = 'other' ORDER BY committed DESC, id DESC", [item])
        guard rows.count > HistoryPolicy.keepCount else { return }
        var byUUID: [VersionID: Int64] = [:]
        let history: [(id: VersionID, committed: Date)] = try rows.compactMap { r in
            guard let u = VersionID(string: try r["uuid"]) else { return nil }
            byUUID[u] = try r["id"]
            return (u, Date(timeIntervalSince1970: try r["committed"]))
        }
        let pruned = HistoryPolicy.prunable(history, now: now).compactMap { byUUID[$0] }
        guard !pruned.isEmpty else { return }
        let hashes = try chunkHashes(db, versions: pruned)
        for row in pruned { try db.execute("DELETE FROM versions WHERE id = ?", [row]) }
        if let account: Int64 = try db.value("SELECT c.account_id FROM items i JOIN containers c ON c.id = i.container_id WHERE i.id = ?", [item]) {
            try releaseUnused(db, account: account, hashes: hashes)
        }
    }

    func commitFile(_ db: any SQLConnection, _ ctx: AuthContext, container c: Int64, _ input: CommitInput, now: Date,
                    batch: CommitBatch? = nil) throws -> CommitResult {
        guard let manifest = input.manifest else { throw StorageError(.invalidRequest, "a file commit needs a manifest") }
        try Self.validate(manifest)
        var item = batch?.itemIsNew(input.itemID) == true ? nil : try db.itemRow(container: c, uuid: input.itemID)
        if let r = item, (try r["kind"] as String) != ItemKind.file.rawValue { throw StorageError(.invalidRequest, "item \(input.itemID) is a folder") }
        if item == nil { try checkParent(db, container: c, input, batch: batch) }
        if item == nil, batch?.pathIsFree(input.path) != true, let live = try db.liveItemRow(container: c, path: input.path) {
            // Same path created independently on two devices: one item (a path is a document).
            guard (try live["kind"] as String) == ItemKind.file.rawValue else { throw StorageError(.pathExists, "a folder already exists at '\(input.path)'") }
            // An end-to-end encrypted account's version carries a record sealed for the item it
            // was committed as: filed under another, its devices would take it for a record the
            // server moved. The device is told the item and commits there itself.
            if input.sealed != nil, let other = ItemID(string: try live["uuid"]) {
                throw StorageError(.pathExists, "a file already exists at '\(input.path)' (item \(other))", item: other)
            }
            item = live
        }
        let decision = ConflictRule.decide(existing: try item.map { try snapshot(db, item: $0) }, base: input.base, incoming: manifest.hash, device: ctx.deviceID)
        let missing = try batch?.missing(manifest) ?? db.missingChunks(accountID: ctx.accountID, manifest: manifest)
        if case .unchanged(let vid) = decision, let r = item {
            let vr = try db.row("SELECT * FROM versions WHERE container_id = ? AND uuid = ?", [c, vid.description])
            return CommitResult(outcome: .unchanged, item: try db.itemRecord(r), version: try vr.map(db.versionRecord),
                                missing: missing.map(\.hash), cursor: try r["seq"])
        }
        let newBytes = missing.reduce(Int64(0)) { $0 + Int64($1.size) }
        let account: (quota: Int64, used: Int64, refs: Int64)? = try batch.map { ($0.quota, $0.used, $0.refsHeld) }
            ?? db.row("SELECT quota, used, refs FROM accounts WHERE id = ?", [ctx.accountID]).map { (try $0["quota"], try $0["used"], try $0["refs"]) }
        if let (quota, used, refs) = account {
            if used + newBytes > quota {
                throw StorageError(.storageFull, "storage full: \(ByteSize.format(used)) of \(ByteSize.format(quota)) used, \(ByteSize.format(newBytes)) more needed")
            }
            if let refused = ChunkReferenceBudget.refusal(held: refs, adding: ChunkReferenceBudget.cost(of: manifest), quota: quota) { throw refused }
        }
        let uploaded = missing.isEmpty
        let outcome: CommitOutcome
        let itemID: Int64
        switch decision {
        case .create:
            // A new file (the common case of a batch): its records are what was just written, so
            // they are built here instead of read back, and the journal needs no clean-up.
            let id = try db.insert("INSERT INTO items (container_id, uuid, path, kind, created) VALUES (?, ?, ?, 'file', ?)", [c, input.itemID.description, input.path.string, now.timeIntervalSince1970])
            let v = try insertVersion(db, ctx, container: c, item: id, state: .current, input: input, manifest: manifest, uploaded: uploaded, now: now, batch: batch)
            if try db.reviveAncestors(container: c, of: input.path, known: batch?.liveFolders) { batch?.invalidate() }
            let seq = try db.insert("INSERT INTO changes (container_id, item_id) VALUES (?, ?)", [c, id], returning: "seq")
            try db.execute("UPDATE items SET current_version = ?, seq = ? WHERE id = ?", [v, seq, id])
            // Dates as the database holds them (seconds since 1970 in a double), as a read would give.
            func stored(_ d: Date) -> Date { Date(timeIntervalSince1970: d.timeIntervalSince1970) }
            let version = VersionRecord(id: input.versionID, state: .current, size: manifest.size, hash: manifest.hash, modified: stored(input.modified),
                                        committed: stored(now), device: ctx.deviceID, deviceName: ctx.deviceName, uploaded: uploaded,
                                        permissions: input.permissions, base: input.base, sealed: input.sealed)
            let record = ItemRecord(id: input.itemID, path: input.path, kind: .file, current: version, conflictCount: 0, deletedAt: nil,
                                    changeSeq: seq, created: version.modified)
            return CommitResult(outcome: .created, item: record, version: version, missing: missing.map(\.hash), cursor: seq)
        case .advance, .revive:
            guard let r = item else { throw StorageError(.internalError, "decision without item") }
            itemID = try r["id"]
            if decision == .revive {
                var path = try RelativePath(validating: try r["path"])
                if try db.liveItemRow(container: c, path: path) != nil {
                    guard try db.liveItemRow(container: c, path: input.path) == nil else { throw StorageError(.pathExists, "'\(path)' is taken") }
                    path = input.path
                }
                try db.execute("UPDATE items SET deleted_at = NULL, trash_group = NULL, path = ? WHERE id = ?", [path.string, itemID])
                try db.reviveAncestors(container: c, of: path)
            }
            try db.execute("UPDATE versions SET state = 'other' WHERE item_id = ? AND state = 'current'", [itemID])
            let v = try insertVersion(db, ctx, container: c, item: itemID, state: .current, input: input, manifest: manifest, uploaded: uploaded, now: now, batch: batch)
            try db.execute("UPDATE items SET current_version = ? WHERE id = ?", [v, itemID])
            try pruneHistory(db, item: itemID, now: now)
            outcome = decision == .revive ? .revived : .updated
        case .conflict:
            guard let r = item else { throw StorageError(.internalError, "decision without item") }
            itemID = try r["id"]
            _ = try insertVersion(db, ctx, container: c, item: itemID, state: .conflict, input: input, manifest: manifest, uploaded: uploaded, now: now, batch: batch)
            outcome = .conflict
        case .unchanged:
            throw StorageError(.internalError, "unreachable")
        }
        let seq = try db.journal(container: c, item: itemID)
        let vr = try db.row("SELECT * FROM versions WHERE container_id = ? AND uuid = ?", [c, input.versionID.description])
        return CommitResult(outcome: outcome, item: try db.itemRecord(rowID: itemID), version: try vr.map(db.versionRecord),
                            missing: missing.map(\.hash), cursor: seq)
    }
}
