import Foundation
import UbiqCore

/// The new files of a commit batch, written together. A batch is mostly new files (a folder
/// moved in, a first sync): each used to cost a savepoint and five statements, one round trip
/// each on PostgreSQL (~2.4 ms a file); a run of them is now four multi-row statements.
///
/// A commit is taken here only when the batch's answers (``CommitBatch``) decide it without
/// the database: new version, new item, free path, parent folder already checked, ancestors
/// known live, within quota and the reference budget — exactly the case where committing it
/// alone would create it and nothing else. Anything else first writes what is pending, then
/// goes the usual way (its reads see everything before it, in order).
struct NewFiles {
    struct Pending {
        let index: Int
        let input: CommitInput
        let manifest: Manifest
        let missing: [ChunkRef]
    }

    private(set) var pending: [Pending] = []

    var isEmpty: Bool { pending.isEmpty }

    /// Takes `input` (the `index`th of the batch) if it is a new file decided without the
    /// database; false when it must go the usual way.
    mutating func take(_ input: CommitInput, index: Int, batch: CommitBatch) -> Bool {
        guard input.kind == .file, let manifest = input.manifest, (try? SQLMetadataStore.validate(manifest)) != nil,
              batch.versionIsNew(input.versionID), batch.itemIsNew(input.itemID), batch.pathIsFree(input.path)
        else { return false }
        if let parentID = input.parent, let parent = input.path.parent, !batch.folderChecked(parent, is: parentID) { return false }
        if let folder = input.path.parent, !batch.liveFolders.paths.contains(folder.string) { return false }
        guard let missing = batch.missing(manifest) else { return false }
        let newBytes = missing.reduce(Int64(0)) { $0 + Int64($1.size) }
        guard batch.used + newBytes <= batch.quota,
              ChunkReferenceBudget.refusal(held: batch.refsHeld, adding: ChunkReferenceBudget.cost(of: manifest), quota: batch.quota) == nil
        else { return false }
        batch.addRefs(ChunkReferenceBudget.cost(of: manifest))
        batch.recordCreated(input)
        pending.append(Pending(index: index, input: input, manifest: manifest, missing: missing))
        return true
    }

    /// Writes the pending files; returns each one's result with its index in the batch.
    mutating func write(_ db: any SQLConnection, _ ctx: AuthContext, container c: Int64, now: Date) throws -> [(Int, CommitResult)] {
        defer { pending.removeAll() }
        guard !pending.isEmpty else { return [] }
        let when = now.timeIntervalSince1970
        var itemIDs: [String: Int64] = [:]
        var versionIDs: [String: Int64] = [:]
        var seqs: [Int64: Int64] = [:]
        // Every id the database gave, looked up (a missing one is the database's failure, not a trap).
        func id(_ ids: [String: Int64], _ key: String) throws -> Int64 {
            guard let v = ids[key] else { throw StorageError(.storageFailure, "the database gave a new row no id") }
            return v
        }
        try SQLBatch.each(pending.count) { range in
            let files = pending[range]
            for r in try db.rows("INSERT INTO items (container_id, uuid, path, kind, created) VALUES \(SQLBatch.tuples(5, files.count)) RETURNING id, uuid",
                                 files.flatMap { [c, $0.input.itemID.description, $0.input.path.string, ItemKind.file.rawValue, when] as [any SQLArgument] }) {
                itemIDs[try r["uuid"]] = try r["id"]
            }
            let versionRows: [any SQLArgument] = try files.flatMap { f -> [any SQLArgument] in
                let item = try id(itemIDs, f.input.itemID.description)
                return [item, c, f.input.versionID.description, VersionState.current.rawValue, f.manifest.size, f.manifest.hash.hex,
                        f.input.modified.timeIntervalSince1970, when, ctx.deviceID.description, ctx.deviceName, f.missing.isEmpty,
                        f.input.permissions, ChunkReferenceBudget.cost(of: f.manifest), f.input.base?.description, f.input.sealed]
            }
            for r in try db.rows("""
                INSERT INTO versions (item_id, container_id, uuid, state, size, hash, modified, committed, device_id, device_name, uploaded, permissions, refs, base, sealed)
                VALUES \(SQLBatch.tuples(15, files.count)) RETURNING id, uuid
                """, versionRows) {
                versionIDs[try r["uuid"]] = try r["id"]
            }
        }
        let chunks: [(Int64, Int, ChunkRef)] = try pending.flatMap { f in
            let v = try id(versionIDs, f.input.versionID.description)
            return f.manifest.chunks.enumerated().map { (v, $0.offset, $0.element) }
        }
        try db.insertMany("INSERT INTO version_chunks (version_id, idx, hash, size)", width: 4, count: chunks.count) { i in
            [chunks[i].0, chunks[i].1, chunks[i].2.hash.hex, chunks[i].2.size]
        }
        try SQLBatch.each(pending.count) { range in
            let items = try pending[range].map { try id(itemIDs, $0.input.itemID.description) }
            // One change each, numbered in the batch's order (as one commit after another).
            for r in try db.rows("INSERT INTO changes (container_id, item_id) VALUES \(SQLBatch.tuples(2, items.count)) RETURNING seq, item_id",
                                 items.flatMap { [c, $0] as [any SQLArgument] }) {
                seqs[try r["item_id"]] = try r["seq"]
            }
            let updates: [any SQLArgument] = try pending[range].flatMap { f -> [any SQLArgument] in
                let item = try id(itemIDs, f.input.itemID.description)
                guard let seq = seqs[item] else { throw StorageError(.storageFailure, "the database numbered no change for a new item") }
                return [item, try id(versionIDs, f.input.versionID.description), seq]
            }
            try db.execute("UPDATE items SET current_version = v.column2, seq = v.column3 FROM (VALUES \(SQLBatch.tuples(3, range.count))) AS v WHERE items.id = v.column1",
                           updates)
        }
        return try pending.map { f in
            guard let seq = seqs[try id(itemIDs, f.input.itemID.description)] else { throw StorageError(.storageFailure, "the database numbered no change for a new item") }
            return (f.index, Self.created(f, seq: seq, ctx, now: now))
        }
    }

    /// What committing the file alone would have answered (the records as just written, dates
    /// as the database holds them).
    static func created(_ f: Pending, seq: Int64, _ ctx: AuthContext, now: Date) -> CommitResult {
        func stored(_ d: Date) -> Date { Date(timeIntervalSince1970: d.timeIntervalSince1970) }
        let version = VersionRecord(id: f.input.versionID, state: .current, size: f.manifest.size, hash: f.manifest.hash, modified: stored(f.input.modified),
                                    committed: stored(now), device: ctx.deviceID, deviceName: ctx.deviceName, uploaded: f.missing.isEmpty,
                                    permissions: f.input.permissions, base: f.input.base, sealed: f.input.sealed)
        let record = ItemRecord(id: f.input.itemID, path: f.input.path, kind: .file, current: version, conflictCount: 0, deletedAt: nil,
                                changeSeq: seq, created: version.modified)
        return CommitResult(outcome: .created, item: record, version: version, missing: f.missing.map(\.hash), cursor: seq)
    }
}
