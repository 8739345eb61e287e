import CFileSupport
import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The engine's side of transfers: what goes (from the trees), and what came of it (into the
/// trees, one place for each direction: `recordUploads`, `recordDownloads`). The wire and disk
/// work is `UploadPipeline` and `DownloadPipeline`; small files travel in batches
/// (`TransferRunner+Batches`), big files here, metadata first. Holds what only transfers need
/// — the transfers running (listed with their progress), downloads cancelled while they run,
/// versions whose stream gave up — and runs on the engine's queue (the `isolated` engine).
final class TransferRunner {
    let uploads: UploadPipeline
    let downloads: DownloadPipeline
    /// Transfers running now, with their progress (listings, `status`).
    var running: TrackedMap<Transfer>
    /// Versions still being uploaded elsewhere whose streaming download gave up waiting for
    /// chunks (the uploader stopped): they are downloaded once complete instead.
    var gaveUp: Set<VersionID> = []
    /// Downloads cancelled while they run (`cancelTransfers`): they stop at their next window.
    var cancelled: Set<ItemID> = []
    /// Transfer batches that failed as a whole (their halves then went as batches of their own).
    var failedBatches = 0
    /// Items whose transfers wait until resumed (`SyncEngine.hold`; until the engine stops).
    var held: Set<ItemID> = []
    /// What this run of transfers finished (`status` reports totals that only grow).
    var session = TransferSession()

    /// A transfer is over: no longer listed, and counted as this run's.
    func end(_ id: ItemID) {
        if let t = running[id] { session.ended(id, t) }
        running[id] = nil
    }

    init(uploads: UploadPipeline, downloads: DownloadPipeline, log: ChangeLog) {
        self.uploads = uploads
        self.downloads = downloads
        self.running = TrackedMap(log: log)
    }


    // MARK: upload

    /// A big file, metadata first: commit the version (the server lists it at once, and other
    /// devices may stream it), then send only the chunks the server lacks, then mark the
    /// content complete.
    func upload(_ id: ItemID, base: VersionID?, on e: isolated SyncEngine) async throws -> Bool {
        guard let l = e.local[id], l.entry.kind == .file else { return false }
        try e.files.checkParents(l.path)
        let path = e.files.path(l.path)
        var manifest = e.contents.manifest(for: l.entry.stamp)
        if manifest == nil {
            guard let (m, st) = try LocalFiles.manifest(path: path), st == l.entry.stamp else { return false }
            e.contents.note(m, for: st)
            manifest = m
        }
        let m = manifest!
        let file = UploadPipeline.File(id: id, base: base, path: l.path, stamp: l.entry.stamp, file: path, manifest: m)
        running[id] = Transfer(direction: .up, bytesDone: 0, bytesTotal: Int64(m.size))
        var shownAs = id  // the ID the transfer is listed under (the server's, once it merged the item)
        defer { end(shownAs) }
        // After a small edit, describe the content against the synced version's manifest.
        var delta: ManifestDelta?
        if let bv = e.synced[id]?.node.version, let baseChunks = try? e.store.indexedChunks(item: id), !baseChunks.isEmpty {
            let d = ManifestDelta.make(base: bv, baseChunks: baseChunks, new: m)
            if d.pieces.count * 2 < m.chunks.count { delta = d }
        }
        let versionID = VersionID(uuid: e.newUUID())
        let parent = e.commitParent(id, l.path)
        let permissions = LocalFiles.permissions(path)
        e.claim([id])
        e.noteSending([(id, versionID, m.hash)])
        // Noted before it goes out: if this engine stops before the content is up and the file
        // is gone by the next pass, the item is deleted rather than left unfinished for ever.
        e.noteAbandoned(versionID)
        let resp: CommitResponse
        do {
            resp = try await uploads.commit({ useDelta in
                CommitRequest(itemID: id, versionID: versionID, path: l.path, kind: .file, base: base,
                              modified: SyncEngine.date(nanos: l.entry.stamp.mtimeNanos), manifest: useDelta ? nil : m, manifestDelta: useDelta ? delta : nil,
                              parent: parent, permissions: permissions)
            }, delta: delta != nil)
        } catch let refused as ClientError where refused.code == .pathExists && revivesAside(id, path: l.path, on: e) {
            e.logger.info("\(l.path): \(refused.message)")
            return true
        }
        let sid = resp.item.id
        e.adopt(id, as: sid)
        if sid != id { running[sid] = running[id]; running[id] = nil; shownAs = sid }
        e.noteRemote(resp.item)
        let item = try await finishUpload(resp, sentAs: id, manifest: m, path: path, on: e)
        try recordUploads([UploadPipeline.Answered(file: file, response: resp, item: item)], on: e)
        e.noteAnswered([id, sid])
        return true
    }

    /// Records what the server answered to uploads (single files and batches alike): the
    /// Remote tree, the merge base, the chunk index for the next edit's delta, the item's
    /// outcome — one transaction.
    func recordUploads(_ answered: [UploadPipeline.Answered], on e: isolated SyncEngine) throws {
        var remoteRows: [(ItemID, RemoteEntry?)] = [], syncedRows: [(ItemID, SyncedEntry?)] = [], index: [(ItemID, Manifest)] = []
        for a in answered {
            let sid = a.response.item.id
            let re = ItemTrees.remoteEntry(a.item)
            e.remote[a.item.id] = re
            remoteRows.append((a.item.id, re))
            let (entry, indexed) = uploadedEntry(a.response, item: a.item, stamp: a.file.stamp, manifest: a.file.manifest, on: e)
            if indexed { index.append((sid, a.file.manifest)) }
            e.synced[sid] = entry
            syncedRows.append((sid, entry))
            e.succeeded(a.file.id)
        }
        try e.store.recordBatch(remote: remoteRows, synced: syncedRows, index: index)
    }
    /// An edit of an item deleted on the server wins and brings it back; when another item has
    /// taken its name since (another device made a new file there), the server refuses the
    /// path: the edited file is renamed beside it here (`name (2)`), and the next round sends it
    /// under that name. It retried the refused name for ever before. True if renamed.
    func revivesAside(_ id: ItemID, path: RelativePath, on e: isolated SyncEngine) -> Bool {
        guard e.remote[id] == nil, e.synced[id] != nil else { return false }
        e.schedule(.pullFirst)
        do { return try e.steps.renameAside(id, from: path) } catch {
            e.logger.warning("\(error)")
            return false
        }
    }

    /// Finishes a committed version the server still lacks content for (a chunk went missing, or
    /// the commit came before the content): sends what it lacks and completes it. Returns the
    /// item as it then stands.
    func finishUpload(_ resp: CommitResponse, sentAs id: ItemID, manifest m: Manifest, path: String, on e: isolated SyncEngine) async throws -> ItemRecord {
        guard let v = resp.version, !v.uploaded || !resp.missing.isEmpty else { return resp.item }
        // The version the content is now at on the server (an earlier commit of the same
        // content, e.g. one whose answer was lost, is answered as `unchanged`): if completing it
        // goes unanswered, that is the version the change feed will show as ours.
        e.sent.answered([id])
        e.noteSending([(resp.item.id, v.id, m.hash)])
        do {
            let shown = resp.item.id
            return try await uploads.complete(v.id, manifest: m, from: path, missing: resp.missing) { await e.addProgress(shown, $0) }
        } catch {
            // Unfinished, and maybe never finished from here: if the file is gone when the next
            // pass looks, the user deleted it and the item is deleted, not waited for.
            e.noteAbandoned(v.id)
            throw error
        }
    }

    /// The merge base an upload's answer gives (one rule for single files and batches): the
    /// server's current version, or, when the server kept the content as a conflict version,
    /// the old base with the conflict's content noted. `indexed`: the manifest is the item's
    /// current content (its chunks are indexed for the next edit's delta).
    func uploadedEntry(_ resp: CommitResponse, item: ItemRecord, stamp: FileStamp, manifest m: Manifest, on e: isolated SyncEngine) -> (entry: SyncedEntry, indexed: Bool) {
        let sid = resp.item.id
        if resp.outcome == .conflict || (resp.outcome == .unchanged && resp.version?.state == .conflict) {
            var node = e.synced[sid]?.node ?? SyncedNode(path: item.path, kind: .file, version: nil, hash: nil)
            node.conflictHash = m.hash
            return (SyncedEntry(node: node, stamp: stamp, stampHash: m.hash), false)
        }
        let path = e.synced[sid]?.node.path ?? item.path
        return (SyncedEntry(node: SyncedNode(path: path, kind: .file, version: item.current?.id, hash: item.current?.hash ?? m.hash),
                            stamp: stamp, stampHash: m.hash), true)
    }

    // MARK: download

    /// A big file: fetched window by window into a partial file beside the container folder
    /// (reusing chunks this device already has, resuming a partial file left by a crash,
    /// streaming while another device still uploads it; see `PartialDownload`), and renamed
    /// into place only if the local file is still as the plan saw it.
    func download(_ id: ItemID, version: VersionID, on e: isolated SyncEngine) async throws -> Bool {
        guard let r = e.remote[id], r.node.version == version, r.node.kind == .file else { return false }
        let w = DownloadPipeline.Wanted(id: id, version: version, target: e.local[id]?.path ?? r.node.path, expected: e.local[id]?.entry.stamp, remote: r)
        let target = w.target
        let base = e.synced[id]?.node.version.flatMap { v in (try? e.store.indexedChunks(item: id)).map { (v, $0) } }
        let m = try await downloads.manifest(w, base: base)
        // Still being uploaded by another device: chunks not on the server yet are waited for.
        let streaming = !r.node.uploaded
        running[id] = Transfer(direction: .down, bytesDone: 0, bytesTotal: Int64(m.size))
        defer { end(id) }

        let partial = downloads.partial(id, version)
        let started = ContinuousClock.now
        // Most unchanged chunks come from the file being replaced; others from other synced
        // files (looked up together per window); the rest are fetched.
        var replacing: ReplacedFileChunks?
        if let s = e.synced[id], s.node.kind == .file, let chunks = try? e.store.indexedChunks(item: id) {
            replacing = ReplacedFileChunks(path: e.files.path(s.node.path), chunks: chunks)
        }
        let replaced = replacing
        let job = PartialDownload(manifest: m, partial: partial, transport: ChunkTransport(client: e.client), waitSeconds: streaming ? Self.streamWait : nil)
        // The closures hop back to the engine (the assembly runs on no actor).
        let outcome = try await job.run(permissions: r.permissions, modified: r.modified, local: { window in
            await e.localChunks(of: window, replaced: replaced)
        }, progress: { await e.setProgress(id, $0) }, stepAside: { streaming in
            // A stream goes at the uploader's pace, which may be slow: when something changes
            // in the folder meanwhile, this download steps aside (what arrived is kept) so the
            // round ends and the change is synced; the next pass resumes it. A cancelled
            // download stops too.
            await e.shouldStepAside(id, streaming: streaming)
        })
        switch outcome {
        case .paused:
            gaveUp.insert(version)
            e.logger.info("\(target): its upload from another device paused; the download resumes when it completes")
            return false
        case .steppedAside where cancelled.remove(id) != nil:
            e.logger.info("\(target): download cancelled (what arrived is kept for the next fetch)")
            return false
        case .steppedAside:
            e.logger.info("\(target): a e.local change while streaming; the download resumes after it is e.synced")
            return false
        case .assembled:
            break
        }
        let assembled = ContinuousClock.now
        e.logger.debug("download \(target): assembled, verified and flushed in \(assembled - started)")

        // Never overwrite a local edit made meanwhile: it will be uploaded (and become a conflict).
        guard e.remote[id]?.node.version == version, e.steps.mayCreateParents(of: target) else { return false }
        try e.files.checkParents(target)
        let dest = e.files.url(target)
        guard let stamp = try Placement.place([Placement(partial: partial, dest: dest.path, path: target.string, expected: w.expected)],
                                              disk: e.disk, watcher: e.watcher, settle: e.settleTime, coordination: e.coordination)[0] else {
            e.logger.info("\(target) changed locally during download; keeping the e.local edit")
            return false
        }
        FileIOSync.directory(dest.deletingLastPathComponent().path)
        let placed = ContinuousClock.now
        try recordDownloads([DownloadPipeline.Placed(wanted: w, manifest: m, stamp: stamp)], on: e)
        e.logger.debug("download \(target): placed in \(placed - assembled), recorded in \(ContinuousClock.now - placed)")
        return true
    }

    /// Records versions placed in the folder (single files and batches alike): the merge base,
    /// the chunk index, the Local tree and its hash, the item's outcome — one transaction.
    func recordDownloads(_ placed: [DownloadPipeline.Placed], on e: isolated SyncEngine) throws {
        var syncedRows: [(ItemID, SyncedEntry?)] = [], index: [(ItemID, Manifest)] = []
        for p in placed {
            let w = p.wanted, r = w.remote
            // Swapped out a local file: it may be held in the partial folder (see `HeldFiles`).
            if w.expected != nil { e.heldCheckDue = true }
            let sPath = w.target == r.node.path ? r.node.path : (e.synced[w.id]?.node.path ?? w.target)
            let entry = SyncedEntry(node: SyncedNode(path: sPath, kind: .file, version: w.version, hash: p.manifest.hash), stamp: p.stamp, stampHash: p.manifest.hash)
            e.synced[w.id] = entry
            syncedRows.append((w.id, entry))
            index.append((w.id, p.manifest))
            e.contents.note(p.manifest, for: p.stamp)
            e.local[w.id] = (w.target, LocalEntry(kind: .file, stamp: p.stamp))
            e.localHashes[w.id] = p.manifest.hash
            e.succeeded(w.id)
        }
        try e.store.recordBatch(remote: [], synced: syncedRows, index: index)
    }

    /// What this device holds of a download window: chunks read from the file being replaced
    /// (checked with the fetches), chunks from other synced files (checked here), the rest missing.
    func localChunks(of window: ArraySlice<ChunkRef>, replaced: ReplacedFileChunks?, on e: isolated SyncEngine) -> PartialDownload.LocalChunks {
        var copied: [(ChunkRef, [UInt8])] = []
        var checked: [ContentHash: [UInt8]] = [:]
        var asked = Set<ContentHash>()
        var elsewhere: [ChunkRef] = []
        for c in window where asked.insert(c.hash).inserted {
            if let mine = replaced?.read(c) { copied.append((c, mine)) } else { elsewhere.append(c) }
        }
        let locations = elsewhere.isEmpty ? [:] : ((try? e.store.chunkLocations(elsewhere.map(\.hash))) ?? [:])
        var missing: [ChunkRef] = []
        for c in elsewhere {
            if let mine = readChunk(c.hash, at: locations[c.hash] ?? [], on: e) { checked[c.hash] = mine } else { missing.append(c) }
        }
        return (copied, checked, missing)
    }

    /// How long a fetch for a version still being uploaded waits without any chunk arriving.
    static let streamWait = 10
}
