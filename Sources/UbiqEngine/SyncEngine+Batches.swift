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
        } catch where Task.isCancelled {
            return false  // paused or stopping
        } catch let e as ClientError where e.code == .serverUnreachable || e.code == .badResponse {
            markOffline(e.message)
            return false
        } catch {
            // The batch as a whole failed (e.g. one file changed meanwhile): each goes alone next time.
            batchesFailed += 1
            logger.warning("batch of \(ops.count): \(error); running them one at a time")
            var progressed = false
            for op in ops where await run(op) { progressed = true }
            return progressed
        }
    }

    // MARK: folders

    /// Creates several folders on the server in one commit request (they must not contain one
    /// another: the caller passes one depth at a time). True if any was created.
    func runFolderBatch(_ ids: [ItemID]) async -> Bool {
        do {
            let wanted = ids.compactMap { id in local[id].flatMap { $0.entry.kind == .folder ? (id, $0) : nil } }
            var done = 0
            for start in stride(from: 0, to: wanted.count, by: TransferBatches.files) {
                let group = wanted[start..<min(wanted.count, start + TransferBatches.files)]
                let parents = localFolders(at: Set(group.compactMap { id, l in remote[id] == nil ? l.path.parent : nil }))
                claim(group.map(\.0))
                let requests = group.map { id, l in
                    CommitRequest(itemID: id, versionID: VersionID(uuid: newUUID()), path: l.path, kind: .folder, base: nil,
                                  modified: Self.date(nanos: l.entry.stamp.mtimeNanos), manifest: nil,
                                  parent: remote[id] == nil ? l.path.parent.flatMap { parents[$0] } : nil)
                }
                let results = try await client.commitMany(config.container, requests)
                var remoteRows: [(ItemID, RemoteEntry?)] = [], syncedRows: [(ItemID, SyncedEntry?)] = []
                for ((id, l), result) in zip(group, results) {
                    guard let item = result.response?.item else {
                        failed(id, code: result.error?.code.rawValue ?? "error", message: result.error?.message ?? "refused")
                        continue
                    }
                    adopt(id, as: item.id)
                    let re = Self.remoteEntry(item)
                    remote[item.id] = re
                    remoteRows.append((item.id, re))
                    let entry = SyncedEntry(node: SyncedNode(path: synced[item.id]?.node.path ?? item.path, kind: .folder, version: nil, hash: nil),
                                            stamp: l.entry.stamp, stampHash: nil)
                    synced[item.id] = entry
                    syncedRows.append((item.id, entry))
                    succeeded(id)
                    done += 1
                }
                try store.recordBatch(remote: remoteRows, synced: syncedRows, index: [])
            }
            return done > 0
        } catch where Task.isCancelled {
            return false  // paused or stopping
        } catch let e as ClientError where e.code == .serverUnreachable || e.code == .badResponse {
            markOffline(e.message)
            return false
        } catch {
            logger.warning("creating \(ids.count) folders: \(error); creating them one at a time")
            var progressed = false
            for id in ids where await run(.createRemoteFolder(id)) { progressed = true }
            return progressed
        }
    }

    // MARK: upload

    /// Chunks the server lacks go up in framed requests, then every file is committed in one
    /// request (its content complete at once), then the outcome is recorded in one transaction.
    func uploadBatch(_ ops: [SyncOp]) async throws -> Int {
        struct Prepared { let id: ItemID; let base: VersionID?; let path: RelativePath; let stamp: FileStamp; let file: String; let manifest: Manifest }
        var prepared: [Prepared] = []
        for op in ops {
            guard case .upload(let id, let base) = op, let l = local[id], l.entry.kind == .file, files.parentsAreFolders(l.path) else { continue }
            let file = files.path(l.path)
            var m = contents.manifest(for: l.entry.stamp)
            if m == nil, let (got, st) = try LocalFiles.manifest(path: file), st == l.entry.stamp { contents.note(got, for: st); m = got }
            guard let m else { continue }  // changed since the scan: re-planned next pass
            prepared.append(Prepared(id: id, base: base, path: l.path, stamp: l.entry.stamp, file: file, manifest: m))
        }
        guard !prepared.isEmpty else { return 0 }
        for p in prepared { transfers[p.id] = Transfer(direction: .up, bytesDone: 0, bytesTotal: Int64(p.manifest.size)) }
        defer { for p in prepared { transfers[p.id] = nil } }

        let t0 = ContinuousClock.now
        // 1. Chunks the server lacks, read back from the files and checked.
        var hashes: [ContentHash] = []
        var seen = Set<ContentHash>()
        for p in prepared { for c in p.manifest.chunks where seen.insert(c.hash).inserted { hashes.append(c.hash) } }
        let transport = ChunkTransport(client: client)
        var missing = try await transport.missing(hashes)
        var chunks: [(ContentHash, [UInt8])] = []
        for p in prepared where p.manifest.chunks.contains(where: { missing.contains($0.hash) }) {
            // The bytes the scan read to hash the file, when it kept them (the server checks every
            // chunk against its name either way).
            var kept: [UInt8]?
            if let b = contents.takeKept(for: p.stamp), b.count == p.manifest.size { kept = b }
            var offset = 0
            for c in p.manifest.chunks {
                defer { offset += c.size }
                guard missing.remove(c.hash) != nil else { continue }
                guard let bytes = kept.map({ Array($0[offset..<offset + c.size]) }) ?? LocalFiles.read(path: p.file, offset: offset, size: c.size) else {
                    throw EngineError(.hashMismatch, "\(p.path) changed while uploading; it will be sent again")
                }
                chunks.append((c.hash, bytes))
            }
        }
        try await transport.send(ChunkTransport.framed(chunks) { $0.1.count })

        let t1 = ContinuousClock.now
        // 2. One commit request for the whole batch.
        let parents = localFolders(at: Set(prepared.compactMap { remote[$0.id] == nil ? $0.path.parent : nil }))
        claim(prepared.map(\.id))
        let requests = prepared.map { p in
            CommitRequest(itemID: p.id, versionID: VersionID(uuid: newUUID()), path: p.path, kind: .file, base: p.base,
                          modified: Self.date(nanos: p.stamp.mtimeNanos), manifest: p.manifest,
                          parent: remote[p.id] == nil ? p.path.parent.flatMap { parents[$0] } : nil, permissions: LocalFiles.permissions(p.file))
        }
        noteSending(zip(prepared, requests).map { ($0.id, $1.versionID, $0.manifest.hash) })
        let results = try await client.commitMany(config.container, requests)

        let t2 = ContinuousClock.now
        // 3. Record every outcome in one transaction.
        var remoteRows: [(ItemID, RemoteEntry?)] = [], syncedRows: [(ItemID, SyncedEntry?)] = [], index: [(ItemID, Manifest)] = []
        var answeredAs: [ItemID] = []  // items the server merged under another ID
        var done = 0
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
            let re = Self.remoteEntry(item)
            remote[item.id] = re
            remoteRows.append((item.id, re))
            let (entry, indexed) = uploadedEntry(resp, item: item, stamp: p.stamp, manifest: p.manifest)
            if indexed { index.append((sid, p.manifest)) }
            synced[sid] = entry
            syncedRows.append((sid, entry))
            succeeded(p.id)
            done += 1
        }
        try store.recordBatch(remote: remoteRows, synced: syncedRows, index: index)
        noteAnswered(prepared.map(\.id) + answeredAs)
        logger.debug("upload batch: chunks \(t1 - t0), commits \(t2 - t1), recorded \(ContinuousClock.now - t2)")
        return done
    }

    // MARK: download

    /// Manifests in one request, chunks in framed requests (those this device holds are read
    /// locally), every file written to a partial file, one flush, then each renamed into place if
    /// its local file is still as planned, one more flush, and one transaction.
    func downloadBatch(_ ops: [SyncOp]) async throws -> Int {
        struct Wanted { let id: ItemID; let version: VersionID; let target: RelativePath; let expected: FileStamp?; let remote: RemoteEntry }
        var wanted: [Wanted] = []
        for op in ops {
            guard case .download(let id, let v) = op, let r = remote[id], r.node.version == v, r.node.kind == .file else { continue }
            wanted.append(Wanted(id: id, version: v, target: local[id]?.path ?? r.node.path, expected: local[id]?.entry.stamp, remote: r))
        }
        guard !wanted.isEmpty else { return 0 }
        for w in wanted { transfers[w.id] = Transfer(direction: .down, bytesDone: 0, bytesTotal: Int64(w.remote.node.size)) }
        defer { for w in wanted { transfers[w.id] = nil } }
        let t0 = ContinuousClock.now
        // Manifests, in one request. (A small file's can no longer be guessed from its hash,
        // which is its chunk list's, not its chunk's.)
        var known = [Manifest?](repeating: nil, count: wanted.count)
        try await fetchManifests(into: &known, for: wanted.map(\.version), at: Array(known.indices))
        let t1 = ContinuousClock.now

        // 1. Chunks: from this device's files when it holds them (checked), else fetched.
        var have = try await gatherChunks(known.map { $0! })
        let ms = known.map { $0! }

        let t2 = ContinuousClock.now
        // 2–3. Off the control queue: partial files (verified), one flush, each renamed into place
        // unless its local file changed meanwhile, one more flush.
        let partials = home.partialFolder(config.container).path
        var jobs: [(Wanted, Manifest)] = []
        var parentsOK: [RelativePath?: Bool] = [:]  // files of one folder share the answer
        for (w, m) in zip(wanted, ms) where remote[w.id]?.node.version == w.version {
            let parent = w.target.parent
            guard files.parentsAreFolders(w.target) else {
                failed(w.id, error: EngineError(.invalidPath, "a folder on the way to '\(w.target)' is a symbolic link (or not a folder) here; it is not followed"))
                continue
            }
            let ok = parentsOK[parent] ?? mayCreateParents(of: w.target)
            parentsOK[parent] = ok
            if ok { jobs.append((w, m)) }
        }
        let files = WrittenFiles(items: jobs.map { w, m in
            WrittenFiles.Item(manifest: m, partial: partials + "/\(w.id)-\(w.version).partial", modified: w.remote.modified, permissions: w.remote.permissions,
                              placement: Placement(partial: partials + "/\(w.id)-\(w.version).partial", dest: self.files.path(w.target),
                                                   path: w.target.string, expected: w.expected))
        })
        let (watcher, settle) = (self.watcher, settleTime)
        let chunks = have
        have = [:]
        // The renames are this engine's own: they alone do not call for a rescan.
        let targets = jobs.map { $0.0.target.string }
        watcher?.expectMoves(into: targets)
        let stamps: [FileStamp?]
        do {
            stamps = try await Task.detached(priority: .userInitiated) {
                try files.writeAndPlace(chunks: chunks, watcher: watcher, settle: settle)
            }.value
        } catch {
            watcher?.cancelMoves(into: targets)
            throw error
        }
        watcher?.cancelMoves(into: zip(targets, stamps).compactMap { $1 == nil ? $0 : nil })
        if jobs.contains(where: { $0.0.expected != nil }) { heldCheckDue = true }
        let t3 = ContinuousClock.now
        var syncedRows: [(ItemID, SyncedEntry?)] = [], index: [(ItemID, Manifest)] = []
        var placed: [(Wanted, Manifest, FileStamp)] = []
        for ((w, m), stamp) in zip(jobs, stamps) { if let stamp { placed.append((w, m, stamp)) } }
        for (w, m, stamp) in placed {
            let r = w.remote
            let sPath = w.target == r.node.path ? r.node.path : (synced[w.id]?.node.path ?? w.target)
            let entry = SyncedEntry(node: SyncedNode(path: sPath, kind: .file, version: w.version, hash: m.hash), stamp: stamp, stampHash: m.hash)
            synced[w.id] = entry
            syncedRows.append((w.id, entry))
            index.append((w.id, m))
            contents.note(m, for: stamp)
            local[w.id] = (w.target, LocalEntry(kind: .file, stamp: stamp))
            localHashes[w.id] = m.hash
            succeeded(w.id)
        }
        try store.recordBatch(remote: [], synced: syncedRows, index: index)
        logger.debug("download batch: manifests \(t1 - t0), chunks \(t2 - t1), written, flushed and placed \(t3 - t2), recorded \(ContinuousClock.now - t3)")
        return placed.count
    }

    /// Asks the server for the manifests of `versions` at `indices` (one request) into `known`.
    func fetchManifests(into known: inout [Manifest?], for versions: [VersionID], at indices: [Int]) async throws {
        guard !indices.isEmpty else { return }
        let got = try await client.manifests(config.container, versions: indices.map { versions[$0] })
        for (i, m) in zip(indices, got) { known[i] = m }
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
            if let bytes = locations[c.hash]?.lazy.compactMap({ self.readChunk(c.hash, at: $0) }).first { have[c.hash] = bytes } else { fetch.append(c) }
        }
        return have.merging(try await ChunkTransport(client: client).fetchAll(fetch)) { a, _ in a }
    }

    /// A chunk read from a synced file at a recorded place, if it still hashes right.
    func readChunk(_ hash: ContentHash, at loc: (item: ItemID, offset: Int, size: Int)) -> [UInt8]? {
        guard let s = synced[loc.item], s.node.kind == .file,
              let bytes = LocalFiles.read(path: files.path(s.node.path), offset: loc.offset, size: loc.size), ContentHash.of(bytes) == hash else { return nil }
        return bytes
    }
}

extension SyncOp {
    /// True for `createRemoteFolder`.
    var isRemoteFolderCreation: Bool {
        if case .createRemoteFolder = self { return true }
        return false
    }
}
