import CFileSupport
import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Small files travel in batches: a few requests and two file-system flushes for hundreds of
/// files instead of three requests and an fsync each. Big files keep the one-at-a-time path
/// (metadata first, progress, resumable partial files).
extension SyncEngine {
    /// Splits a pass's transfers into batches of small files and the rest (run one at a time).
    func splitBatches(_ ops: [SyncOp]) -> (uploads: [[SyncOp]], downloads: [[SyncOp]], single: [SyncOp]) {
        var up: [TransferBatches.Candidate] = [], down: [TransferBatches.Candidate] = [], single: [SyncOp] = []
        for op in ops {
            switch op {
            case .upload(let id, _):
                if let l = local[id], l.entry.kind == .file, l.entry.stamp.size <= TransferBatches.fileLimit {
                    up.append(.init(op: op, size: l.entry.stamp.size, path: l.path.string))
                } else { single.append(op) }
            case .download(let id, _):
                if let r = remote[id], r.node.kind == .file, Int64(r.node.size) <= TransferBatches.fileLimit {
                    down.append(.init(op: op, size: Int64(r.node.size), path: r.node.path.string))
                } else { single.append(op) }
            default: single.append(op)
            }
        }
        return TransferBatches.split(uploads: up, downloads: down, single: single)
    }

    /// Runs a batch of operations and reports per-item errors like `run` does. True if anything changed.
    func runBatch(_ ops: [SyncOp], upload: Bool) async -> Bool {
        guard !stopped, !ops.isEmpty else { return false }
        do {
            let done = upload ? try await uploadBatch(ops) : try await downloadBatch(ops)
            logger.debug("batch of \(ops.count) \(upload ? "upload" : "download")(s) → \(done) done")
            return done > 0
        } catch where endsWithoutFailure(error) {
            return false
        } catch {
            guard ops.count > 1 else {
                failed(ops[0].item, error: error)
                logger.warning("\(ops[0]): \(error)")
                return false
            }
            // The batch as a whole failed (g. one file changed meanwhile): its two halves go as
            // batches of their own, and so on down to the file at fault — a few requests, not one
            // per file (66 files one at a time took minutes on a busy server while a writer kept
            // changing one of them).
            transfer.failedBatches += 1
            logger.warning("batch of \(ops.count): \(error); running it in halves")
            let mid = ops.count / 2
            var progressed = false
            for half in [Array(ops[..<mid]), Array(ops[mid...])] where await runBatch(half, upload: upload) { progressed = true }
            return progressed
        }
    }

    // MARK: upload

    /// Chunks the server lacks go up in framed requests, then every file is committed in one
    /// request (its content complete at once), then the outcome is recorded in one transaction.
    func uploadBatch(_ ops: [SyncOp]) async throws -> Int {
        var prepared: [UploadPipeline.File] = []
        for op in ops {
            guard case .upload(let id, let base) = op, let l = local[id], l.entry.kind == .file else { continue }
            guard files.parentsAreFolders(l.path) else {
                failed(id, error: EngineError(.invalidPath, "a folder on the way to '\(l.path)' is a symbolic link (or not a folder) here; it is not followed"))
                continue
            }
            let file = files.path(l.path)
            var m = contents.manifest(for: l.entry.stamp)
            if m == nil, let (got, st) = try LocalFiles.manifest(path: file), st == l.entry.stamp { contents.note(got, for: st); m = got }
            guard let m else { continue }  // changed since the scan: re-planned next pass
            prepared.append(UploadPipeline.File(id: id, base: base, path: l.path, stamp: l.entry.stamp, file: file, manifest: m,
                                                kept: contents.takeKept(for: l.entry.stamp)))
        }
        guard !prepared.isEmpty else { return 0 }
        for p in prepared { transfer.running[p.id] = Transfer(direction: .up, bytesDone: 0, bytesTotal: Int64(p.manifest.size)) }
        defer { for p in prepared { transfer.end(p.id) } }

        let t0 = ContinuousClock.now
        // 1. Chunks the server lacks (the bytes the scan read to hash a file when it kept them).
        try await transfer.uploads.sendContent(of: prepared)
        for i in prepared.indices { prepared[i].kept = nil }

        let t1 = ContinuousClock.now
        // 2. One commit request for the whole batch.
        let parents = localFolders(at: Set(prepared.compactMap { remote[$0.id] == nil ? $0.path.parent : nil }))
        claim(prepared.map(\.id))
        let requests = prepared.map { p in
            CommitRequest(itemID: p.id, versionID: VersionID(uuid: newUUID()), path: p.path, kind: .file, base: p.base,
                          modified: SyncEngine.date(nanos: p.stamp.mtimeNanos), manifest: p.manifest,
                          parent: remote[p.id] == nil ? p.path.parent.flatMap { parents[$0] } : nil, permissions: LocalFiles.permissions(p.file))
        }
        noteSending(zip(prepared, requests).map { ($0.id, $1.versionID, $0.manifest.hash) })
        let results = try await transfer.uploads.commit(requests)

        let t2 = ContinuousClock.now
        // 3. Every outcome, recorded in one transaction.
        var answered: [UploadPipeline.Answered] = []
        var answeredAs: [ItemID] = []  // items the server merged under another ID
        for (p, result) in zip(prepared, results) {
            guard let resp = result.response else {
                if result.error?.code == .pathExists && revivesAside(p.id, path: p.path) { continue }
                failed(p.id, code: result.error?.code.rawValue ?? "error", message: result.error?.message ?? "refused")
                continue
            }
            let sid = resp.item.id
            adopt(p.id, as: sid)
            if sid != p.id { answeredAs.append(sid) }
            // A chunk went missing meanwhile (another device's upload raced ours): sent the usual way.
            let item = try await finishUpload(resp, sentAs: p.id, manifest: p.manifest, path: p.file)
            answered.append(UploadPipeline.Answered(file: p, response: resp, item: item))
        }
        try apply(uploads: answered)
        noteAnswered(prepared.map(\.id) + answeredAs)
        logger.debug("upload batch: chunks \(t1 - t0), commits \(t2 - t1), recorded \(ContinuousClock.now - t2)")
        return answered.count
    }

    // MARK: download

    /// Manifests in one request, chunks in framed requests (those this device holds are read
    /// locally), every file written to a partial file, one flush, then each renamed into place if
    /// its local file is still as planned, one more flush, and one transaction.
    func downloadBatch(_ ops: [SyncOp]) async throws -> Int {
        var wanted: [DownloadPipeline.Wanted] = []
        for op in ops {
            guard case .download(let id, let v) = op, let r = remote[id], r.node.version == v, r.node.kind == .file else { continue }
            wanted.append(.init(id: id, version: v, target: local[id]?.path ?? r.node.path, expected: local[id]?.entry.stamp, remote: r))
        }
        guard !wanted.isEmpty else { return 0 }
        for w in wanted { transfer.running[w.id] = Transfer(direction: .down, bytesDone: 0, bytesTotal: Int64(w.remote.node.size)) }
        defer { for w in wanted { transfer.end(w.id) } }
        let t0 = ContinuousClock.now
        // Manifests, in one request, each checked against its version's hash.
        let ms = try await transfer.downloads.manifests(wanted)
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
                failed(w.id, error: EngineError(.invalidPath, "a folder on the way to '\(w.target)' is a symbolic link (or not a folder) here; it is not followed"))
                continue
            }
            let ok = parentsOK[parent] ?? steps.mayCreateParents(of: w.target)
            parentsOK[parent] = ok
            if ok { jobs.append((w, m)) }
        }
        let chunks = have
        have = [:]
        let stamps = try await transfer.downloads.writeAndPlace(jobs, dest: files.path, chunks: chunks, watcher: watcher, settle: settleTime,
                                                       coordination: coordination)
        if jobs.contains(where: { $0.0.expected != nil }) { heldCheckDue = true }
        let t3 = ContinuousClock.now
        let placed = zip(jobs, stamps).compactMap { job, stamp in stamp.map { DownloadPipeline.Placed(wanted: job.0, manifest: job.1, stamp: $0) } }
        try apply(downloads: placed)
        logger.debug("download batch: manifests \(t1 - t0), chunks \(t2 - t1), written, flushed and placed \(t3 - t2), recorded \(ContinuousClock.now - t3)")
        return placed.count
    }

    /// The chunks of `ms`: read from this device's files where it holds them (checked), the rest
    /// fetched in framed requests, several at once.
    func gatherChunks(_ ms: [Manifest]) async throws -> [ContentHash: [UInt8]] {
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

    /// A chunk read from a synced file at the first of its recorded places where it still hashes right.
    func readChunk(_ hash: ContentHash, at places: [(item: ItemID, offset: Int, size: Int)]) -> [UInt8]? {
        for loc in places {
            guard let s = synced[loc.item], s.node.kind == .file,
                  let bytes = LocalFiles.read(path: files.path(s.node.path), offset: loc.offset, size: loc.size), ContentHash.of(bytes) == hash else { continue }
            return bytes
        }
        return nil
    }
}

extension SyncOp {
    /// `upload` or `download`.
    var isTransfer: Bool {
        switch self {
        case .upload, .download: return true
        default: return false
        }
    }

    /// True for `createRemoteFolder`.
    var isRemoteFolderCreation: Bool {
        if case .createRemoteFolder = self { return true }
        return false
    }
}
