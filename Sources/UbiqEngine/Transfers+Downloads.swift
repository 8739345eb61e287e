import CFileSupport
import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

/// Downloads: one big file at a time (window by window into a resumable partial file,
/// streaming while another device uploads it), small files in batches. The wire and disk work
/// is ``DownloadPipeline``'s and ``PartialDownload``'s; placed versions reach the trees
/// through the host's `apply(downloads:swapped:)`.
extension Transfers {
    /// A big file: fetched window by window into a partial file beside the container folder
    /// (reusing chunks this device already has, resuming a partial file left by a crash,
    /// streaming while another device still uploads it; see `PartialDownload`), and renamed
    /// into place only if the local file is still as the plan saw it.
    nonisolated(nonsending) func downloadFile(_ id: ItemID, version: VersionID) async throws -> Bool {
        guard let r = remote[id], r.node.version == version, r.node.kind == .file else { return false }
        let w = DownloadPipeline.Wanted(id: id, version: version, target: local[id]?.path ?? r.node.path, expected: local[id]?.entry.stamp, remote: r)
        let target = w.target
        let base = synced[id]?.node.version.flatMap { v in (try? store.indexedChunks(item: id)).map { (v, $0) } }
        let m = try await downloads.manifest(w, base: base)
        if let here = await alreadyHere([(w, m)]).first {
            try await host.apply(downloads: [here], swapped: false)
            return true
        }
        // Still being uploaded by another device: chunks not on the server yet are waited for.
        let streaming = !r.node.uploaded
        running[id] = Transfer(direction: .down, bytesDone: 0, bytesTotal: Int64(m.size))
        defer { end(id) }

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
        // The closures go back to the engine (the assembly runs on no actor).
        let host = self.host
        let outcome = try await job.run(permissions: r.permissions, modified: r.modified, local: { window in
            await host.localChunks(of: window, replaced: replaced)
        }, progress: { await host.transferProgress(id, $0, add: false) }, stepAside: { streaming in
            // A stream goes at the uploader's pace, which may be slow: when something changes
            // in the folder meanwhile, this download steps aside (what arrived is kept) so the
            // round ends and the change is synced; the next pass resumes it. A cancelled
            // download stops too.
            await host.shouldStepAside(id, streaming: streaming)
        })
        switch outcome {
        case .paused:
            gaveUp.insert(version)
            logger.info("\(target): its upload from another device paused; the download resumes when it completes")
            return false
        case .steppedAside where cancelled.remove(id) != nil:
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
        let watcher = await host.folderWatcher()
        guard let stamp = try Placement.place([Placement(partial: partial, dest: dest.path, path: target.string, expected: w.expected)],
                                              disk: disk, watcher: watcher, settle: settleTime, coordination: coordination)[0] else {
            logger.info("\(target) changed locally during download; keeping the local edit")
            return false
        }
        FileIOSync.directory(dest.deletingLastPathComponent().path)
        let placed = ContinuousClock.now
        try await host.apply(downloads: [DownloadPipeline.Placed(wanted: w, manifest: m, stamp: stamp)], swapped: w.expected != nil)
        logger.debug("download \(target): placed in \(placed - assembled), recorded in \(ContinuousClock.now - placed)")
        return true
    }

    /// Manifests in one request, chunks in framed requests (those this device holds are read
    /// locally), every file written to a partial file, one flush, then each renamed into place if
    /// its local file is still as planned, one more flush, and one transaction.
    nonisolated(nonsending) func downloadBatch(_ ops: [SyncOp]) async throws -> Int {
        var wanted: [DownloadPipeline.Wanted] = []
        for op in ops {
            guard case .download(let id, let v) = op, let r = remote[id], r.node.version == v, r.node.kind == .file else { continue }
            wanted.append(.init(id: id, version: v, target: local[id]?.path ?? r.node.path, expected: local[id]?.entry.stamp, remote: r))
        }
        guard !wanted.isEmpty else { return 0 }
        for w in wanted { running[w.id] = Transfer(direction: .down, bytesDone: 0, bytesTotal: Int64(w.remote.node.size)) }
        let all = wanted.map(\.id)
        defer { for id in all { end(id) } }
        let t0 = ContinuousClock.now
        // Manifests, in one request, each checked against its version's hash.
        var ms = try await downloads.manifests(wanted)
        let here = await alreadyHere(Array(zip(wanted, ms)))
        if !here.isEmpty {
            try await host.apply(downloads: here, swapped: false)
            let placed = Set(here.map(\.wanted.id))
            (wanted, ms) = (wanted.indices.filter { !placed.contains(wanted[$0].id) }.map { wanted[$0] }, ms.indices.filter { !placed.contains(wanted[$0].id) }.map { ms[$0] })
            guard !wanted.isEmpty else { return here.count }
        }
        let t1 = ContinuousClock.now

        // 1. Chunks: from this device's files when it holds them (checked), else fetched.
        var have = try await gatherChunks(ms)

        let t2 = ContinuousClock.now
        // 2–3. Off the control queue: partial files (verified), one flush, each renamed into place
        // unless its local file changed meanwhile, one more flush.
        var jobs: [(DownloadPipeline.Wanted, Manifest)] = []
        var parentsOK: [RelativePath?: Bool] = [:]  // files of one folder share the answer
        for (w, m) in zip(wanted, ms) where remote[w.id]?.node.version == w.version {
            let parent = w.target.parent
            guard files.parentsAreFolders(w.target) else {
                await host.failed(w.id, code: ErrorCode.invalidPath.rawValue, message: Self.linkOnTheWay(w.target))
                continue
            }
            let ok = parentsOK[parent] ?? steps.mayCreateParents(of: w.target)
            parentsOK[parent] = ok
            if ok { jobs.append((w, m)) }
        }
        let chunks = have
        have = [:]
        let watcher = await host.folderWatcher()
        let stamps = try await downloads.writeAndPlace(jobs, dest: files.path, chunks: chunks, watcher: watcher, settle: settleTime,
                                                       coordination: coordination)
        let t3 = ContinuousClock.now
        let placed = zip(jobs, stamps).compactMap { job, stamp in stamp.map { DownloadPipeline.Placed(wanted: job.0, manifest: job.1, stamp: $0) } }
        try await host.apply(downloads: placed, swapped: jobs.contains { $0.0.expected != nil })
        logger.debug("download batch: manifests \(t1 - t0), chunks \(t2 - t1), written, flushed and placed \(t3 - t2), recorded \(ContinuousClock.now - t3)")
        return here.count + placed.count
    }

    /// The chunks of `ms`: read from this device's files where it holds them (checked), the rest
    /// fetched in framed requests, several at once.
    nonisolated(nonsending) func gatherChunks(_ ms: [Manifest]) async throws -> [ContentHash: [UInt8]] {
        var have: [ContentHash: [UInt8]] = [:]
        var need: [ChunkRef] = []
        var seen = Set<ContentHash>()
        for m in ms { for c in m.chunks where seen.insert(c.hash).inserted { need.append(c) } }
        let locations = (try? store.chunkLocations(need.map(\.hash))) ?? [:]
        var fetch: [ChunkRef] = []
        for c in need {
            if let bytes = readChunk(c.hash, at: locations[c.hash] ?? []) { have[c.hash] = bytes } else { fetch.append(c) }
        }
        return have.merging(try await ChunkTransport(client: client).fetchAll(fetch)) { a, _ in a }
    }

    /// The downloads whose content this device already holds. After `ubiq rekey` on another
    /// device, a new version holds the same bytes as the merge base with its chunks named under
    /// a newer key (so no chunk of the file being replaced matches): a file unchanged here since
    /// it was synced, of the version's size, is hashed under the newest key and, when that gives
    /// the version's hash, recorded as placed — nothing fetched or written. Only a ring of
    /// several generations names one content two ways, so nothing else pays for the look.
    nonisolated(nonsending) func alreadyHere(_ jobs: [(DownloadPipeline.Wanted, Manifest)]) async -> [DownloadPipeline.Placed] {
        guard files.chunker.naming.generations > 1 else { return [] }
        var candidates: [(wanted: DownloadPipeline.Wanted, manifest: Manifest, path: String, stamp: FileStamp)] = []
        for (w, m) in jobs {
            guard let s = synced[w.id], let stamp = s.stamp, w.expected == stamp, stamp.size == Int64(m.size), s.node.hash != m.hash,
                  local[w.id]?.path == w.target else { continue }
            candidates.append((w, m, files.path(w.target), stamp))
        }
        guard !candidates.isEmpty else { return [] }
        let chunker = files.chunker, work = candidates.map { ($0.path, $0.stamp) }
        let hashes = await Task.detached(priority: .utility) {
            work.map { path, stamp in ((try? LocalFiles.manifest(path: path, chunker: chunker)) ?? nil).flatMap { $0.1 == stamp ? $0.0.hash : nil } }
        }.value
        // Still as hashed: the server's version, and the file here as the merge base left it (a
        // scan meanwhile may have seen an edit).
        return zip(candidates, hashes).compactMap { c, hash in
            guard hash == c.manifest.hash, remote[c.wanted.id]?.node.version == c.wanted.version, local[c.wanted.id]?.entry.stamp == c.stamp,
                  synced[c.wanted.id]?.stamp == c.stamp else { return nil }
            return DownloadPipeline.Placed(wanted: c.wanted, manifest: c.manifest, stamp: c.stamp)
        }
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
