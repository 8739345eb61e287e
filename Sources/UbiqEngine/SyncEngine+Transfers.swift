import Foundation
import CFileSupport
import UbiqClient
import UbiqCore
import UbiqProtocol
#if canImport(Glibc)
import Glibc
#endif

extension SyncEngine {
    // MARK: upload

    /// Metadata first: commit the version (the server lists it at once), then send only the
    /// chunks the server lacks, then mark the content complete.
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
        func request(_ useDelta: Bool) -> CommitRequest {
            CommitRequest(itemID: id, versionID: versionID, path: l.path, kind: .file, base: base,
                          modified: Self.date(nanos: l.entry.stamp.mtimeNanos), manifest: useDelta ? nil : m, manifestDelta: useDelta ? delta : nil,
                          parent: parent, permissions: permissions)
        }
        let resp: CommitResponse
        do {
            do {
                resp = try await client.commit(config.container, request(delta != nil))
            } catch let e as ClientError where delta != nil && (e.code == .invalidRequest || e.code == .notFound) {
                resp = try await client.commit(config.container, request(false))  // the base was not what we thought: send it whole
            }
        } catch let e as ClientError where e.code == .pathExists && revivesAside(id, path: l.path) {
            logger.info("\(l.path): \(e.message)")
            return true
        }
        let sid = resp.item.id
        adopt(id, as: sid)
        if sid != id { transfers[sid] = transfers[id]; transfers[id] = nil; shownAs = sid }
        noteRemote(resp.item)

        let item = try await finishUpload(resp, sentAs: id, manifest: m, path: path)
        if item != resp.item { noteRemote(item) }
        let (entry, indexed) = uploadedEntry(resp, item: item, stamp: l.entry.stamp, manifest: m)
        try setSynced(sid, entry)
        if indexed { try store.indexChunks(item: sid, manifest: m) }
        noteAnswered([id, sid])
        return true
    }

    /// An edit of an item deleted on the server wins and brings it back; when another item has
    /// taken its name since (another device made a new file there), the server refuses the
    /// path: the edited file is renamed beside it here (`name (2)`), and the next round sends it
    /// under that name. It retried the refused name for ever before. True if renamed.
    func revivesAside(_ id: ItemID, path: RelativePath) -> Bool {
        guard remote[id] == nil, synced[id] != nil else { return false }
        schedule(.pullFirst)
        do { return try renameAside(id, from: path) } catch {
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
            try await sendChunks(of: m, path: path, missing: Set(resp.missing), item: resp.item.id)
            return try await client.complete(config.container, version: v.id)
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

    /// Uploads the missing chunks in framed batches of up to `batchBytes` (three requests at
    /// a time), re-read from the file and named by the hash they should have: the server stores
    /// nothing of a batch whose bytes do not match, so a file changed meanwhile is re-planned,
    /// never stored torn.
    func sendChunks(of m: Manifest, path: String, missing: Set<ContentHash>, item: ItemID) async throws {
        var batches: [[(ContentHash, Int, Int)]] = [[]]
        var batchBytes = 0
        var seen = Set<ContentHash>()
        var offset = 0
        for c in m.chunks {
            defer { offset += c.size }
            guard missing.contains(c.hash) && seen.insert(c.hash).inserted else { continue }
            if batchBytes + c.size > Self.batchBytes || batches[batches.count - 1].count >= WireLimits.maxChunksPerBatch {
                batches.append([]); batchBytes = 0
            }
            batches[batches.count - 1].append((c.hash, offset, c.size))
            batchBytes += c.size
        }
        let client = self.client
        try await withThrowingTaskGroup(of: Int.self) { group in
            var running = 0
            for batch in batches where !batch.isEmpty {
                if running >= 3, let n = try await group.next() { addProgress(item, n); running -= 1 }
                group.addTask {
                    let fd = open(path, O_RDONLY | O_CLOEXEC)
                    guard fd >= 0 else { throw EngineError(.hashMismatch, "\(path) is gone; it will be sent again if it comes back") }
                    defer { close(fd) }
                    try await Self.refusedMeansChanged(path) {
                        // Read from the file straight into the request body.
                        try await client.uploadChunks(named: batch.map { ($0.0, $0.2) }) { i, buf in
                            let (_, off, size) = batch[i]
                            var done = 0
                            while done < size {
                                let n = pread(fd, buf.baseAddress! + done, size - done, off_t(off + done))
                                if n < 0 && errno == EINTR { continue }
                                guard n > 0 else { throw EngineError(.hashMismatch, "\(path) changed while uploading; it will be sent again") }
                                done += n
                            }
                        }
                    }
                    return batch.reduce(0) { $0 + $1.2 }
                }
                running += 1
            }
            for try await n in group { addProgress(item, n) }
        }
    }

    /// A download window's chunks, each verified: `copied` ones (read from a local file, not yet
    /// checked) are hashed here, and any that no longer match are fetched with the `missing`
    /// ones; `checked` ones are taken as they are.
    static func gather(copied: [(ChunkRef, [UInt8])], checked: [ContentHash: [UInt8]], missing: [ChunkRef],
                       client: any SyncServer, waitSeconds: Int?) async throws -> [ContentHash: ChunkBytes] {
        var have = checked.mapValues { ChunkBytes.local($0) }
        var missing = missing
        for (c, bytes) in copied {
            if ContentHash.of(bytes) == c.hash { have[c.hash] = .local(bytes) } else { missing.append(c) }
        }
        var requests: [[ContentHash]] = [[]]
        var requestBytes = 0
        for w in missing {
            if requestBytes + w.size > batchBytes, !requests[requests.count - 1].isEmpty { requests.append([]); requestBytes = 0 }
            requests[requests.count - 1].append(w.hash)
            requestBytes += w.size
        }
        let fetched = try await fetch(requests.filter { !$0.isEmpty }, client: client, waitSeconds: waitSeconds)
        return have.merging(fetched) { a, _ in a }
    }

    /// Fetches the chunks of `requests` (each one framed request), three requests at a time.
    static func fetch(_ requests: [[ContentHash]], client: any SyncServer, waitSeconds: Int?) async throws -> [ContentHash: ChunkBytes] {
        var have: [ContentHash: ChunkBytes] = [:]
        func keep(_ r: [ContentHash], _ got: FetchedChunks) { for (i, h) in r.enumerated() { have[h] = .fetched(got, i) } }
        try await withThrowingTaskGroup(of: ([ContentHash], FetchedChunks).self) { group in
            var running = 0
            for r in requests {
                if running >= 3, let got = try await group.next() { keep(got.0, got.1); running -= 1 }
                group.addTask { (r, try await client.fetchChunks(r, waitSeconds: waitSeconds)) }
                running += 1
            }
            for try await got in group { keep(got.0, got.1) }
        }
        return have
    }

    /// Runs an upload of named chunks: the server refusing one that does not match its name
    /// means the file changed while it was read, reported as such.
    static func refusedMeansChanged(_ path: String, _ upload: () async throws -> Void) async throws {
        do {
            try await upload()
        } catch let e as ClientError where e.code == .hashMismatch {
            throw EngineError(.hashMismatch, "\(path) changed while uploading; it will be sent again")
        }
    }

    func addProgress(_ id: ItemID, _ n: Int) {
        transfers[id]?.bytesDone += Int64(n)
    }

    // MARK: download

    /// Fetches a version into a partial file beside the container folder (reusing chunks this
    /// device already has, resuming a partial file left by a crash), verifies it, and renames it
    /// into place only if the local file is still as the plan saw it.
    ///
    /// Every chunk is verified against its hash before it is written — fetched ones in the fetch
    /// tasks, copies from this device's files beside them (so on several cores) — and the chunk
    /// list against the version's hash, which is derived from it: the assembled file is the
    /// version's content without a second pass over its bytes. A chunk copied from a local file
    /// that no longer matches (the file changed unseen) is fetched instead.
    func download(_ id: ItemID, version: VersionID) async throws -> Bool {
        guard let r = remote[id], r.node.version == version, r.node.kind == .file else { return false }
        let target = local[id]?.path ?? r.node.path
        let expected = local[id]?.entry.stamp
        let m = try await manifest(of: id, version: version)
        guard m.isConsistent, m.hash == r.node.hash || r.node.hash == nil else {
            throw EngineError(.hashMismatch, "the server's chunk list for \(target) does not match its hash; it will be fetched again")
        }
        // Still being uploaded by another device: chunks not on the server yet are waited for.
        let streaming = !r.node.uploaded
        transfers[id] = Transfer(direction: .down, bytesDone: 0, bytesTotal: Int64(m.size))
        defer { transfers[id] = nil }

        let partial = home.partialFolder(config.container).appendingPathComponent("\(id)-\(version).partial", isDirectory: false).path
        let fd = open(partial, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw EngineError(.storageFailure, "cannot write \(partial): \(String(cString: strerror(errno)))") }
        var closed = false
        defer { if !closed { close(fd) } }
        let started = ContinuousClock.now
        var offset = 0
        // Most unchanged chunks come from the file being replaced: read them from it directly.
        var sameFile: [ContentHash: (offset: Int, size: Int)] = [:]
        var sameFD: Int32 = -1
        if let s = synced[id], s.node.kind == .file, let chunks = try? store.indexedChunks(item: id) {
            var off = 0
            for c in chunks { if sameFile[c.hash] == nil { sameFile[c.hash] = (off, c.size) }; off += c.size }
            sameFD = open(files.path(s.node.path), O_RDONLY | O_CLOEXEC)
        }
        defer { if sameFD >= 0 { close(sameFD) } }
        func fromSameFile(_ c: ChunkRef) -> [UInt8]? {
            guard sameFD >= 0, let loc = sameFile[c.hash], loc.size == c.size else { return nil }
            var buf = [UInt8](repeating: 0, count: c.size)
            let n = buf.withUnsafeMutableBytes { pread(sameFD, $0.baseAddress, c.size, off_t(loc.offset)) }
            return n == c.size ? buf : nil  // verified with the window's fetches
        }
        // Chunks already in the partial file from an interrupted attempt are kept.
        var index = 0
        while index < m.chunks.count, let have = LocalFiles.read(path: partial, offset: offset, size: m.chunks[index].size),
              ContentHash.of(have) == m.chunks[index].hash {
            offset += m.chunks[index].size
            index += 1
        }
        transfers[id]?.bytesDone = Int64(offset)
        ftruncate(fd, off_t(offset))
        // Fresh bytes go through one aligned buffer, straight to disk where the file system allows.
        guard let writer = ubiq_writer_open(fd, Int64(offset), Self.writerBuffer) else {
            throw EngineError(.storageFailure, "cannot write \(partial): \(String(cString: strerror(errno)))")
        }
        defer { ubiq_writer_free(writer) }

        // Windows of chunks: local copies are read (from the file being replaced, else from other
        // synced files, looked up together), the rest fetched in framed requests of up to
        // `batchBytes`, three at a time. The next windows' requests (`windowsAhead`) go out before
        // this one is written, so a device that downloads while another uploads keeps pace.
        let client = self.client
        let wait = streaming ? Self.streamWait : nil
        func prepare(_ from: Int) -> (window: ArraySlice<ChunkRef>, fetched: Task<[ContentHash: ChunkBytes], Error>) {
            let window = m.chunks[from..<min(m.chunks.count, from + Self.windowChunks)]
            var copied: [(ChunkRef, [UInt8])] = []
            var checked: [ContentHash: [UInt8]] = [:]
            var asked = Set<ContentHash>()
            var elsewhere: [ChunkRef] = []
            for w in window where asked.insert(w.hash).inserted {
                if let mine = fromSameFile(w) { copied.append((w, mine)) } else { elsewhere.append(w) }
            }
            let locations = elsewhere.isEmpty ? [:] : ((try? store.chunkLocations(elsewhere.map(\.hash))) ?? [:])
            var missing: [ChunkRef] = []
            for w in elsewhere {
                if let mine = locations[w.hash]?.lazy.compactMap({ self.readChunk(w.hash, at: $0) }).first { checked[w.hash] = mine } else { missing.append(w) }
            }
            let fetched = Task { try await Self.gather(copied: copied, checked: checked, missing: missing, client: client, waitSeconds: wait) }
            return (window, fetched)
        }
        var ahead: [(window: ArraySlice<ChunkRef>, fetched: Task<[ContentHash: ChunkBytes], Error>)] = []
        var nextStart = index
        func fill() {
            while ahead.count < Self.windowsAhead, nextStart < m.chunks.count {
                let p = prepare(nextStart)
                nextStart = p.window.endIndex
                ahead.append(p)
            }
        }
        fill()
        defer { for p in ahead { p.fetched.cancel() } }
        while !ahead.isEmpty {
            let current = ahead.removeFirst()
            let fetched: [ContentHash: ChunkBytes]
            do {
                fetched = try await current.fetched.value
            } catch let e as ClientError where streaming && e.code == .notFound {
                // The uploader stopped sending: what arrived stays in the partial file, and the
                // rest is fetched once the version is complete.
                if ubiq_writer_finish(writer) == 0 { fsync(fd) }
                streamGaveUp.insert(version)
                logger.info("\(target): its upload from another device paused; the download resumes when it completes")
                return false
            }
            fill()
            for w in current.window {
                guard let bytes = fetched[w.hash], bytes.count == w.size else { throw EngineError(.hashMismatch, "chunk \(w.hash) missing") }
                try Self.append(bytes, to: writer, path: partial)
                offset += w.size
            }
            transfers[id]?.bytesDone = Int64(offset)
            // A stream goes at the uploader's pace, which may be slow: when something changes
            // in the folder meanwhile, this download steps aside (what arrived is kept) so the
            // round ends and the change is synced; the next pass resumes it.
            if streaming, !ahead.isEmpty, let w = watcher, w.foreignEvents() != foreignAtScan {
                if ubiq_writer_finish(writer) == 0 { fsync(fd) }
                logger.info("\(target): a local change while streaming; the download resumes after it is synced")
                return false
            }
        }
        guard ubiq_writer_finish(writer) == 0 else {
            throw EngineError(.storageFailure, "cannot write \(partial): \(String(cString: strerror(errno)))")
        }
        ftruncate(fd, off_t(offset))
        LocalFiles.setPermissions(fd, r.permissions)
        if let mod = r.modified { Self.setTimes(fd, mod) }
        let assembled = ContinuousClock.now
        guard fsync(fd) == 0 else { throw EngineError(.storageFailure, "cannot sync \(partial)") }
        close(fd)
        closed = true
        logger.debug("download \(target): assembled and verified in \(assembled - started), fsync \(ContinuousClock.now - assembled)")

        // Never overwrite a local edit made meanwhile: it will be uploaded (and become a conflict).
        guard remote[id]?.node.version == version, mayCreateParents(of: target) else { return false }
        try files.checkParents(target)
        let dest = files.url(target)
        guard let stamp = try Placement.place([Placement(partial: partial, dest: dest.path, path: target.string, expected: expected)],
                                              watcher: watcher, settle: settleTime)[0] else {
            logger.info("\(target) changed locally during download; keeping the local edit")
            return false
        }
        FileIOSync.directory(dest.deletingLastPathComponent().path)
        if expected != nil { heldCheckDue = true }
        let placed = ContinuousClock.now
        let sPath = target == r.node.path ? r.node.path : (synced[id]?.node.path ?? target)
        try setSynced(id, SyncedEntry(node: SyncedNode(path: sPath, kind: .file, version: version, hash: m.hash), stamp: stamp, stampHash: m.hash))
        try store.indexChunks(item: id, manifest: m)
        logger.debug("download \(target): placed in \(placed - assembled), recorded in \(ContinuousClock.now - placed)")
        contents.note(m, for: stamp)
        local[id] = (target, LocalEntry(kind: .file, stamp: stamp))
        localHashes[id] = m.hash
        return true
    }

    /// A version's manifest: as a delta from the synced version when this device has that one's
    /// chunk list (checked by digest), else whole.
    func manifest(of id: ItemID, version: VersionID) async throws -> Manifest {
        if let bv = synced[id]?.node.version, bv != version, let baseChunks = try? store.indexedChunks(item: id), !baseChunks.isEmpty {
            if let d = try? await client.manifestDelta(config.container, version: version, base: bv), let m = try? d.apply(baseChunks: baseChunks) {
                return m
            }
        }
        return try await client.manifest(config.container, version: version)
    }

    /// Chunks a download assembles per window.
    static let windowChunks = 1024

    /// Windows whose chunks are being fetched while the one before them is written.
    static let windowsAhead = 2

    /// How long a fetch for a version still being uploaded waits without any chunk arriving.
    static let streamWait = 10

    /// The buffer of a download's writer: big enough that direct writes are few.
    static let writerBuffer = 8 << 20

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int, path: String) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, bytes.count - done, off_t(offset + done)) }
            if n < 0 { if errno == EINTR { continue }; throw EngineError(.storageFailure, "cannot write \(path): \(String(cString: strerror(errno)))") }
            done += n
        }
    }

    static func append(_ bytes: ChunkBytes, to writer: OpaquePointer, path: String) throws {
        let rc = bytes.withBytes { ubiq_writer_write(writer, $0.baseAddress, $0.count) }
        guard rc == 0 else { throw EngineError(.storageFailure, "cannot write \(path): \(String(cString: strerror(errno)))") }
    }
}
