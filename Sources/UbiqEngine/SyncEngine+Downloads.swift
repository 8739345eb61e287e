import CFileSupport
import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Downloads one file at a time (a big file: window by window into a resumable partial file,
/// streaming while another device uploads it) and the one place placed versions reach the
/// trees (`apply(downloads:)`, batches too). The wire and disk work is ``DownloadPipeline``'s
/// and ``PartialDownload``'s.
extension SyncEngine {
    /// A big file: fetched window by window into a partial file beside the container folder
    /// (reusing chunks this device already has, resuming a partial file left by a crash,
    /// streaming while another device still uploads it; see `PartialDownload`), and renamed
    /// into place only if the local file is still as the plan saw it.
    func downloadFile(_ id: ItemID, version: VersionID) async throws -> Bool {
        guard let r = remote[id], r.node.version == version, r.node.kind == .file else { return false }
        let w = DownloadPipeline.Wanted(id: id, version: version, target: local[id]?.path ?? r.node.path, expected: local[id]?.entry.stamp, remote: r)
        let target = w.target
        let base = synced[id]?.node.version.flatMap { v in (try? store.indexedChunks(item: id)).map { (v, $0) } }
        let m = try await transfer.downloads.manifest(w, base: base)
        // Still being uploaded by another device: chunks not on the server yet are waited for.
        let streaming = !r.node.uploaded
        transfer.running[id] = Transfer(direction: .down, bytesDone: 0, bytesTotal: Int64(m.size))
        defer { transfer.end(id) }

        let partial = transfer.downloads.partial(id, version)
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
            await localChunks(of: window, replaced: replaced)
        }, progress: { await setProgress(id, $0) }, stepAside: { streaming in
            // A stream goes at the uploader's pace, which may be slow: when something changes
            // in the folder meanwhile, this download steps aside (what arrived is kept) so the
            // round ends and the change is synced; the next pass resumes it. A cancelled
            // download stops too.
            await shouldStepAside(id, streaming: streaming)
        })
        switch outcome {
        case .paused:
            transfer.gaveUp.insert(version)
            logger.info("\(target): its upload from another device paused; the download resumes when it completes")
            return false
        case .steppedAside where transfer.cancelled.remove(id) != nil:
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
                                              disk: disk, watcher: watcher, settle: settleTime, coordination: coordination)[0] else {
            logger.info("\(target) changed locally during download; keeping the local edit")
            return false
        }
        FileIOSync.directory(dest.deletingLastPathComponent().path)
        let placed = ContinuousClock.now
        try apply(downloads: [DownloadPipeline.Placed(wanted: w, manifest: m, stamp: stamp)])
        logger.debug("download \(target): placed in \(placed - assembled), recorded in \(ContinuousClock.now - placed)")
        return true
    }

    /// Records versions placed in the folder (single files and batches alike): the merge base,
    /// the chunk index, the Local tree and its hash, the item's outcome — one transaction.
    func apply(downloads placed: [DownloadPipeline.Placed]) throws {
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
            if let mine = readChunk(c.hash, at: locations[c.hash] ?? []) { checked[c.hash] = mine } else { missing.append(c) }
        }
        return (copied, checked, missing)
    }

    /// How long a fetch for a version still being uploaded waits without any chunk arriving.
    static let streamWait = 10
}
