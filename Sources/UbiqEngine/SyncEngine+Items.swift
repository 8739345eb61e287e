import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol
#if canImport(Glibc)
import Glibc
#endif

/// What happened to one path of a multi-path command (`download`, `evict`, `rm`).
public struct PathResult: Codable, Sendable, Equatable {
    public var path: String
    /// nil when it worked; otherwise one line saying why not.
    public var error: String?
    public init(path: String, error: String? = nil) { self.path = path; self.error = error }
}

/// Item commands: versions and conflicts, on-demand content, delete and trash. Each works from
/// the engine's state plus the server; effects on the folder happen through the normal pass.
extension SyncEngine {
    /// The item at a path (listed by the server or only local).
    public func itemID(at path: RelativePath) -> ItemID? { trees.itemID(at: path) }

    func requireServerItem(_ path: RelativePath) throws -> ItemID {
        guard let id = itemID(at: path) else { throw EngineError(.notFound, "no item at \(path)") }
        guard remote[id] != nil else { throw EngineError(.notFound, "\(path) is not on the server yet") }
        return id
    }

    /// Items at or under a path (a folder names everything inside it).
    func items(under path: RelativePath) -> [ItemID] { trees.items(under: path) }

    /// True when the item's local content is not (yet) on the server: eviction and removal refuse.
    func hasUnsyncedContent(_ id: ItemID) -> Bool {
        guard let l = local[id], l.entry.kind == .file else { return false }
        guard let s = synced[id], let h = localHashes[id] else { return true }  // new, or not hashed (still being written)
        if transfers[id]?.direction == .up { return true }
        if h == s.node.conflictHash { return false }
        return h != s.node.hash || !(remote[id]?.node.uploaded ?? false) && remote[id]?.node.hash == h
    }

    // MARK: versions

    /// Every version of the item at `path`: current, unresolved conflicts, history.
    public func versions(of path: RelativePath) async throws -> VersionsResponse {
        let id = try requireServerItem(path)
        return try await client.versions(config.container, item: id)
    }

    /// Makes one version (current, conflict or history) the current one everywhere.
    public func resolve(_ path: RelativePath, keep: VersionID) async throws -> ItemRecord {
        let id = try requireServerItem(path)
        let item = try await client.resolve(config.container, item: id, keep: keep)
        try await pullRemote()
        await syncNow()
        return item
    }

    /// Keeps the current version and makes every conflict version a document of its own beside
    /// it (`name (conflict from DEVICE DATE).ext`); returns the copies' paths.
    public func keepBoth(_ path: RelativePath) async throws -> [RelativePath] {
        let id = try requireServerItem(path)
        let parent = path.parent.flatMap { itemID(at: $0) }
        let made = try await KeepBoth.perform(client, container: config.container, item: id, path: path, parent: parent)
        try await pullRemote()
        await syncNow()
        return made
    }

    // MARK: on-demand content

    /// Fetches the content of the items at (or under) the paths and waits for it.
    public func download(_ paths: [RelativePath]) async -> [PathResult] {
        await scanLocal()
        var results: [PathResult] = []
        var targets: [(RelativePath, ItemID)] = []
        for p in paths {
            let ids = items(under: p).filter { remote[$0]?.node.kind == .file }
            if ids.isEmpty && itemID(at: p) == nil { results.append(PathResult(path: p.string, error: "no item at \(p)")); continue }
            targets += ids.map { (p, $0) }
        }
        let ids = targets.map(\.1)
        do {
            try wishes.want(ids, pin: config.download == .onDemand)
        } catch {
            return paths.map { PathResult(path: $0.string, error: "\(error)") }
        }
        await syncNow()
        for p in Set(targets.map(\.0)).sorted() {
            let failed = targets.filter { $0.0 == p && local[$0.1] == nil }.map(\.1)
            if let f = failed.first {
                let why = outcomes.errors[f] ?? (remote[f]?.node.uploaded == false ? "its content has not finished uploading from the device that wrote it" : lastError ?? "not downloaded")
                results.append(PathResult(path: p.string, error: "\(remote[f]?.node.path.string ?? p.string): \(why)"))
            } else {
                results.append(PathResult(path: p.string))
            }
        }
        return results
    }

    /// Tries the failing items at (or under) the paths again now instead of after their retry
    /// delay (all failing items when `paths` is empty); returns how many were waiting.
    public func retry(_ paths: [RelativePath]) -> Int {
        let ids = paths.isEmpty ? nil : paths.flatMap { items(under: $0) }
        let n = outcomes.retryNow(ids, now: .now)
        if n > 0 { requestPass() }
        return n
    }

    /// Drops the local content of the items at (or under) the paths; they stay listed as
    /// `notDownloaded` and absent from the folder. Refused for content not yet on the server.
    public func evict(_ paths: [RelativePath]) async -> [PathResult] {
        await scanLocal()
        var results: [PathResult] = []
        for p in paths {
            let ids = items(under: p).filter { (local[$0]?.entry.kind ?? remote[$0]?.node.kind) == .file }
            if ids.isEmpty && itemID(at: p) == nil { results.append(PathResult(path: p.string, error: "no item at \(p)")); continue }
            if let bad = ids.first(where: hasUnsyncedContent) {
                let bp = local[bad]?.path ?? p
                results.append(PathResult(path: p.string, error: "\(bp) has changes not uploaded yet; it cannot be evicted until they are (run 'ubiq sync')"))
                continue
            }
            var failure: String?
            for id in ids where local[id] != nil {
                do { try steps.evict(id) { try wishes.evict([id], dropSynced: true) } } catch { failure = "\(error)" }
            }
            let cloudOnly = ids.filter { local[$0] == nil && remote[$0] != nil && !evicted.contains($0) }
            if !cloudOnly.isEmpty { try? wishes.evict(cloudOnly) }
            results.append(PathResult(path: p.string, error: failure))
        }
        requestPass()
        return results
    }

    // MARK: delete and trash

    /// Deletes items on every device (the server keeps them in its trash).
    public func remove(_ paths: [RelativePath]) async -> [PathResult] {
        await scanLocal()
        var results: [PathResult] = []
        for p in paths {
            guard let id = itemID(at: p) else { results.append(PathResult(path: p.string, error: "no item at \(p)")); continue }
            if let bad = items(under: p).first(where: hasUnsyncedContent) {
                let bp = local[bad]?.path ?? p
                results.append(PathResult(path: p.string, error: "\(bp) has changes not uploaded yet; wait for them (run 'ubiq sync') and try again"))
                continue
            }
            guard remote[id] != nil else { results.append(PathResult(path: p.string, error: "\(p) is not on the server yet")); continue }
            do {
                _ = try await client.delete(config.container, item: id)
                // The server moved the folder's contents to the trash too: read all of it back at
                // once, so no pass sees the folder gone but its contents still there (and revives it).
                try await pullRemote()
                results.append(PathResult(path: p.string))
            } catch {
                results.append(PathResult(path: p.string, error: "\(error)"))
            }
        }
        await syncNow()
        return results
    }

    /// Items in the server's trash (top-level deletions, newest first).
    public func trash() async throws -> [ItemRecord] {
        try await client.trash(config.container).items
    }

    /// Purges the server's trash now (`ubiq trash empty`): nothing in it can be restored after.
    public func emptyTrash() async throws -> TrashEmptied {
        try await client.emptyTrash(config.container)
    }

    /// Brings an item back from the trash (with its history) on every device.
    public func restore(_ path: RelativePath) async throws -> ItemRecord {
        guard let hit = try await trash().first(where: { $0.path == path }) else { throw EngineError(.notFound, "nothing at \(path) in the trash") }
        let item = try await client.restore(config.container, item: hit.id)
        try await pullRemote()
        await syncNow()
        return item
    }
}

extension SyncEngine {
    /// The first `limit` bytes of one version's content (for previews), fetched chunk by chunk
    /// and verified; nothing is written to the folder.
    public func versionContent(_ path: RelativePath, version: VersionID, limit: Int = 64 << 10) async throws -> [UInt8] {
        _ = try requireServerItem(path)
        let m = try await client.manifest(config.container, version: version)
        var out: [UInt8] = []
        for c in m.chunks where out.count < limit {
            let bytes = try await client.downloadChunk(c.hash)
            guard ContentHash.of(bytes) == c.hash else { throw EngineError(.hashMismatch, "a chunk of \(path) did not match its hash") }
            out += bytes.prefix(limit - out.count)
        }
        return out
    }
}

extension SyncEngine {
    /// A three-way merge of a text conflict of the document at `path` (the conflict version
    /// `conflict`, or its only one) against the version both were edited from, to be looked at
    /// (and edited) before it is kept with ``keepMerge(_:text:)``.
    public func mergeDraft(_ path: RelativePath, conflict: VersionID? = nil) async throws -> MergeDraft {
        let id = try requireServerItem(path)
        return try await ConflictMerge.draft(client, container: config.container, item: id, path: path, conflict: conflict)
    }

    /// Keeps `text` (a draft's merged text, perhaps edited) as the document's current version;
    /// the conflict version and the version it replaces stay in history.
    public func keepMerge(_ draft: MergeDraft, text: String) async throws -> ItemRecord {
        let item = try await ConflictMerge.keep(client, container: config.container, draft: draft, text: text, modified: Date())
        try await pullRemote()
        await syncNow()
        return item
    }
}

extension SyncEngine {
    /// Pins (or unpins) the items at the paths: a pinned item is kept on this device — on an
    /// on-demand device its content is fetched now and each new version as it comes; a pinned
    /// folder keeps everything in it, files added later too. Unpinning leaves the content as it
    /// is (`evict` drops it).
    public func pin(_ paths: [RelativePath], _ on: Bool) async -> [PathResult] {
        var results: [PathResult] = []
        var ids: [ItemID] = []
        for p in paths {
            guard let id = itemID(at: p) else { results.append(PathResult(path: p.string, error: "no item at \(p)")); continue }
            if on, trees.path(of: id)?.isExcluded == true {
                results.append(PathResult(path: p.string, error: "\(p) is excluded (.nosync): it stays on this device anyway"))
                continue
            }
            ids.append(id)
            results.append(PathResult(path: p.string))
        }
        guard !ids.isEmpty else { return results }
        do {
            try wishes.setPinned(ids, on)
        } catch {
            return paths.map { PathResult(path: $0.string, error: "\(error)") }
        }
        // Listings show the flag on each item and on everything in a pinned folder.
        for id in ids {
            changeLog.note(id)
            if let p = trees.path(of: id) { for k in items(under: p) { changeLog.note(k) } }
        }
        if on { requestPass() }
        return results
    }

    /// The paths of pinned folders (the server's).
    func pinnedFolderPaths() -> [RelativePath] {
        wishes.pinned.compactMap { id in remote[id].flatMap { $0.node.kind == .folder ? $0.node.path : nil } }
    }

    /// What the planner keeps: pinned items and everything in a pinned folder.
    func pinnedForPlan() -> Set<ItemID> {
        let folders = pinnedFolderPaths()
        guard !folders.isEmpty else { return wishes.pinned }
        var out = wishes.pinned
        for (id, r) in remote where folders.contains(where: { r.node.path.isSelfOrDescendant(of: $0) }) { out.insert(id) }
        return out
    }
}

extension SyncEngine {
    /// Cancels the downloads of the items at (or under) the paths (`X` in the front end): one
    /// running stops at its next window (what arrived is kept in its partial file, so a later
    /// fetch resumes), and an item not on this device stays in the cloud until fetched (`f`,
    /// `ubiq download`). An upload cannot be cancelled alone — the device would no longer agree
    /// with its folder; pausing (`P`, `ubiq pause`) stops every transfer.
    public func cancelTransfers(_ paths: [RelativePath]) -> [PathResult] {
        var results: [PathResult] = []
        let planned = Set(pendingOps.compactMap { op -> ItemID? in if case .download(let id, _) = op { return id } else { return nil } })
        for p in paths {
            let ids = items(under: p)
            let downloads = ids.filter { transfers[$0]?.direction == .down || planned.contains($0) }
            let uploads = ids.filter { transfers[$0]?.direction == .up }
            if downloads.isEmpty {
                results.append(PathResult(path: p.string, error: uploads.isEmpty ? "nothing is being transferred at \(p)"
                    : "\(p) is uploading: an upload cannot be cancelled alone (P pauses all syncing)"))
                continue
            }
            cancelledDownloads.formUnion(downloads)
            let cloudOnly = downloads.filter { local[$0] == nil }
            do { if !cloudOnly.isEmpty { try wishes.evict(cloudOnly) } } catch {
                results.append(PathResult(path: p.string, error: "\(error)"))
                continue
            }
            for id in downloads { changeLog.note(id) }
            let updates = downloads.count - cloudOnly.count
            results.append(PathResult(path: p.string, error: updates == 0 ? nil
                : "\(updates) of them update a file that is here: they are fetched again by the next pass (E evicts the file instead)"))
        }
        return results
    }
}
