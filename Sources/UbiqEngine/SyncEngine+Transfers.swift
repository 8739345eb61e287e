import Foundation
import CFileSupport
import UbiqClient
import UbiqCore
import UbiqProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The engine's side of transfers: what goes (from the trees), and what came of it (into the
/// trees, one place for each direction). The wire and disk work is `UploadPipeline` and
/// `DownloadPipeline`; small files travel in batches (`SyncEngine+Batches`), big files here.
extension SyncEngine {
    var uploads: UploadPipeline { UploadPipeline(client: client, container: config.container) }
    var downloads: DownloadPipeline { DownloadPipeline(client: client, container: config.container, partials: home.partialFolder(config.container).path, disk: disk) }

    // MARK: upload

    /// A big file, metadata first: commit the version (the server lists it at once, and other
    /// devices may stream it), then send only the chunks the server lacks, then mark the
    /// content complete.
    func upload(_ id: ItemID, base: VersionID?) async throws -> Bool {
        guard let l = local[id], l.entry.kind == .file else { return false }
        try files.checkParents(l.path)
        let path = files.path(l.path)
        var manifest = contents.manifest(for: l.entry.stamp)
        if manifest == nil {
            guard let (m, st) = try LocalFiles.manifest(path: path), st == l.entry.stamp else { return false }
            contents.note(m, for: st)
            manifest = m
        }
        let m = manifest!
        let file = UploadPipeline.File(id: id, base: base, path: l.path, stamp: l.entry.stamp, file: path, manifest: m)
        transfers[id] = Transfer(direction: .up, bytesDone: 0, bytesTotal: Int64(m.size))
        var shownAs = id  // the ID the transfer is listed under (the server's, once it merged the item)
        defer { transfers[shownAs] = nil }
        // After a small edit, describe the content against the synced version's manifest.
        var delta: ManifestDelta?
        if let bv = synced[id]?.node.version, let baseChunks = try? store.indexedChunks(item: id), !baseChunks.isEmpty {
            let d = ManifestDelta.make(base: bv, baseChunks: baseChunks, new: m)
            if d.pieces.count * 2 < m.chunks.count { delta = d }
        }
        let versionID = VersionID(uuid: newUUID())
        let parent = commitParent(id, l.path)
        let permissions = LocalFiles.permissions(path)
        claim([id])
        noteSending([(id, versionID, m.hash)])
        // Noted before it goes out: if this engine stops before the content is up and the file
        // is gone by the next pass, the item is deleted rather than left unfinished for ever.
        noteAbandoned(versionID)
        let resp: CommitResponse
        do {
            resp = try await uploads.commit({ useDelta in
                CommitRequest(itemID: id, versionID: versionID, path: l.path, kind: .file, base: base,
                              modified: Self.date(nanos: l.entry.stamp.mtimeNanos), manifest: useDelta ? nil : m, manifestDelta: useDelta ? delta : nil,
                              parent: parent, permissions: permissions)
            }, delta: delta != nil)
        } catch let e as ClientError where e.code == .pathExists && revivesAside(id, path: l.path) {
            logger.info("\(l.path): \(e.message)")
            return true
        }
        let sid = resp.item.id
        adopt(id, as: sid)
        if sid != id { transfers[sid] = transfers[id]; transfers[id] = nil; shownAs = sid }
        noteRemote(resp.item)
        let item = try await finishUpload(resp, sentAs: id, manifest: m, path: path)
        try recordUploads([UploadPipeline.Answered(file: file, response: resp, item: item)])
        noteAnswered([id, sid])
        return true
    }

    /// Records what the server answered to uploads (single files and batches alike): the
    /// Remote tree, the merge base, the chunk index for the next edit's delta, the item's
    /// outcome — one transaction.
    func recordUploads(_ answered: [UploadPipeline.Answered]) throws {
        var remoteRows: [(ItemID, RemoteEntry?)] = [], syncedRows: [(ItemID, SyncedEntry?)] = [], index: [(ItemID, Manifest)] = []
        for a in answered {
            let sid = a.response.item.id
            let re = ItemTrees.remoteEntry(a.item)
            remote[a.item.id] = re
            remoteRows.append((a.item.id, re))
            let (entry, indexed) = uploadedEntry(a.response, item: a.item, stamp: a.file.stamp, manifest: a.file.manifest)
            if indexed { index.append((sid, a.file.manifest)) }
            synced[sid] = entry
            syncedRows.append((sid, entry))
            succeeded(a.file.id)
        }
        try store.recordBatch(remote: remoteRows, synced: syncedRows, index: index)
    }
    /// An edit of an item deleted on the server wins and brings it back; when another item has
    /// taken its name since (another device made a new file there), the server refuses the
    /// path: the edited file is renamed beside it here (`name (2)`), and the next round sends it
    /// under that name. It retried the refused name for ever before. True if renamed.
    func revivesAside(_ id: ItemID, path: RelativePath) -> Bool {
        guard remote[id] == nil, synced[id] != nil else { return false }
        schedule(.pullFirst)
        do { return try steps.renameAside(id, from: path) } catch {
            logger.warning("\(error)")
            return false
        }
    }

    /// Finishes a committed version the server still lacks content for (a chunk went missing, or
    /// the commit came before the content): sends what it lacks and completes it. Returns the
    /// item as it then stands.
    func finishUpload(_ resp: CommitResponse, sentAs id: ItemID, manifest m: Manifest, path: String) async throws -> ItemRecord {
        guard let v = resp.version, !v.uploaded || !resp.missing.isEmpty else { return resp.item }
        // The version the content is now at on the server (an earlier commit of the same
        // content, e.g. one whose answer was lost, is answered as `unchanged`): if completing it
        // goes unanswered, that is the version the change feed will show as ours.
        sent.answered([id])
        noteSending([(resp.item.id, v.id, m.hash)])
        do {
            let shown = resp.item.id
            return try await uploads.complete(v.id, manifest: m, from: path, missing: resp.missing) { await self.addProgress(shown, $0) }
        } catch {
            // Unfinished, and maybe never finished from here: if the file is gone when the next
            // pass looks, the user deleted it and the item is deleted, not waited for.
            noteAbandoned(v.id)
            throw error
        }
    }

    /// The merge base an upload's answer gives (one rule for single files and batches): the
    /// server's current version, or, when the server kept the content as a conflict version,
    /// the old base with the conflict's content noted. `indexed`: the manifest is the item's
    /// current content (its chunks are indexed for the next edit's delta).
    func uploadedEntry(_ resp: CommitResponse, item: ItemRecord, stamp: FileStamp, manifest m: Manifest) -> (entry: SyncedEntry, indexed: Bool) {
        let sid = resp.item.id
        if resp.outcome == .conflict || (resp.outcome == .unchanged && resp.version?.state == .conflict) {
            var node = synced[sid]?.node ?? SyncedNode(path: item.path, kind: .file, version: nil, hash: nil)
            node.conflictHash = m.hash
            return (SyncedEntry(node: node, stamp: stamp, stampHash: m.hash), false)
        }
        let path = synced[sid]?.node.path ?? item.path
        return (SyncedEntry(node: SyncedNode(path: path, kind: .file, version: item.current?.id, hash: item.current?.hash ?? m.hash),
                            stamp: stamp, stampHash: m.hash), true)
    }

    func addProgress(_ id: ItemID, _ n: Int) {
        transfers[id]?.bytesDone += Int64(n)
    }

    func setProgress(_ id: ItemID, _ n: Int) {
        transfers[id]?.bytesDone = Int64(n)
    }

    /// A running download stops at its next window: it was cancelled, or (streaming) the
    /// folder changed meanwhile.
    func shouldStepAside(_ id: ItemID, streaming: Bool) -> Bool {
        cancelledDownloads.contains(id) || (streaming && folderChangedSinceScan())
    }

    /// Something other than this engine changed the folder since the last scan.
    func folderChangedSinceScan() -> Bool {
        watcher.map { $0.foreignEvents() != foreignAtScan } ?? false
    }

    // MARK: download

    /// A big file: fetched window by window into a partial file beside the container folder
    /// (reusing chunks this device already has, resuming a partial file left by a crash,
    /// streaming while another device still uploads it; see `PartialDownload`), and renamed
    /// into place only if the local file is still as the plan saw it.
    func download(_ id: ItemID, version: VersionID) async throws -> Bool {
        guard let r = remote[id], r.node.version == version, r.node.kind == .file else { return false }
        let w = DownloadPipeline.Wanted(id: id, version: version, target: local[id]?.path ?? r.node.path, expected: local[id]?.entry.stamp, remote: r)
        let target = w.target
        let base = synced[id]?.node.version.flatMap { v in (try? store.indexedChunks(item: id)).map { (v, $0) } }
        let m = try await downloads.manifest(w, base: base)
        // Still being uploaded by another device: chunks not on the server yet are waited for.
        let streaming = !r.node.uploaded
        transfers[id] = Transfer(direction: .down, bytesDone: 0, bytesTotal: Int64(m.size))
        defer { transfers[id] = nil }

        let partial = downloads.partial(id, version)
        let started = ContinuousClock.now
        // Most unchanged chunks come from the file being replaced; others from other synced
        // files (looked up together per window); the rest are fetched.
        var replacing: ReplacedFileChunks?
        if let s = synced[id], s.node.kind == .file, let chunks = try? store.indexedChunks(item: id) {
            replacing = ReplacedFileChunks(path: files.path(s.node.path), chunks: chunks)
        }
        let replaced = replacing
        let job = PartialDownload(manifest: m, partial: partial, transport: ChunkTransport(client: client), waitSeconds: streaming ? Self.streamWait : nil)
        // The closures hop back to the engine (the assembly runs on no actor).
        let outcome = try await job.run(permissions: r.permissions, modified: r.modified, local: { window in
            await self.localChunks(of: window, replaced: replaced)
        }, progress: { await self.setProgress(id, $0) }, stepAside: { streaming in
            // A stream goes at the uploader's pace, which may be slow: when something changes
            // in the folder meanwhile, this download steps aside (what arrived is kept) so the
            // round ends and the change is synced; the next pass resumes it. A cancelled
            // download stops too.
            await self.shouldStepAside(id, streaming: streaming)
        })
        switch outcome {
        case .paused:
            streamGaveUp.insert(version)
            logger.info("\(target): its upload from another device paused; the download resumes when it completes")
            return false
        case .steppedAside where cancelledDownloads.remove(id) != nil:
            logger.info("\(target): download cancelled (what arrived is kept for the next fetch)")
            return false
        case .steppedAside:
            logger.info("\(target): a local change while streaming; the download resumes after it is synced")
            return false
        case .assembled:
            break
        }
        let assembled = ContinuousClock.now
        logger.debug("download \(target): assembled, verified and flushed in \(assembled - started)")

        // Never overwrite a local edit made meanwhile: it will be uploaded (and become a conflict).
        guard remote[id]?.node.version == version, steps.mayCreateParents(of: target) else { return false }
        try files.checkParents(target)
        let dest = files.url(target)
        guard let stamp = try Placement.place([Placement(partial: partial, dest: dest.path, path: target.string, expected: w.expected)],
                                              disk: disk, watcher: watcher, settle: settleTime)[0] else {
            logger.info("\(target) changed locally during download; keeping the local edit")
            return false
        }
        FileIOSync.directory(dest.deletingLastPathComponent().path)
        let placed = ContinuousClock.now
        try recordDownloads([DownloadPipeline.Placed(wanted: w, manifest: m, stamp: stamp)])
        logger.debug("download \(target): placed in \(placed - assembled), recorded in \(ContinuousClock.now - placed)")
        return true
    }

    /// Records versions placed in the folder (single files and batches alike): the merge base,
    /// the chunk index, the Local tree and its hash, the item's outcome — one transaction.
    func recordDownloads(_ placed: [DownloadPipeline.Placed]) throws {
        var syncedRows: [(ItemID, SyncedEntry?)] = [], index: [(ItemID, Manifest)] = []
        for p in placed {
            let w = p.wanted, r = w.remote
            // Swapped out a local file: it may be held in the partial folder (see `HeldFiles`).
            if w.expected != nil { heldCheckDue = true }
            let sPath = w.target == r.node.path ? r.node.path : (synced[w.id]?.node.path ?? w.target)
            let entry = SyncedEntry(node: SyncedNode(path: sPath, kind: .file, version: w.version, hash: p.manifest.hash), stamp: p.stamp, stampHash: p.manifest.hash)
            synced[w.id] = entry
            syncedRows.append((w.id, entry))
            index.append((w.id, p.manifest))
            contents.note(p.manifest, for: p.stamp)
            local[w.id] = (w.target, LocalEntry(kind: .file, stamp: p.stamp))
            localHashes[w.id] = p.manifest.hash
            succeeded(w.id)
        }
        try store.recordBatch(remote: [], synced: syncedRows, index: index)
    }

    /// What this device holds of a download window: chunks read from the file being replaced
    /// (checked with the fetches), chunks from other synced files (checked here), the rest missing.
    func localChunks(of window: ArraySlice<ChunkRef>, replaced: ReplacedFileChunks?) -> PartialDownload.LocalChunks {
        var copied: [(ChunkRef, [UInt8])] = []
        var checked: [ContentHash: [UInt8]] = [:]
        var asked = Set<ContentHash>()
        var elsewhere: [ChunkRef] = []
        for c in window where asked.insert(c.hash).inserted {
            if let mine = replaced?.read(c) { copied.append((c, mine)) } else { elsewhere.append(c) }
        }
        let locations = elsewhere.isEmpty ? [:] : ((try? store.chunkLocations(elsewhere.map(\.hash))) ?? [:])
        var missing: [ChunkRef] = []
        for c in elsewhere {
            if let mine = locations[c.hash]?.lazy.compactMap({ self.readChunk(c.hash, at: $0) }).first { checked[c.hash] = mine } else { missing.append(c) }
        }
        return (copied, checked, missing)
    }

    /// How long a fetch for a version still being uploaded waits without any chunk arriving.
    static let streamWait = 10
}
