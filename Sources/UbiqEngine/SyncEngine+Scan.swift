import Foundation
import UbiqCore

extension SyncEngine {
    /// True when `p` or one of its ancestors is in `paths`.
    static func isAtOrUnder(_ p: RelativePath, _ paths: Set<RelativePath>) -> Bool {
        var a: RelativePath? = p
        while let x = a {
            if paths.contains(x) { return true }
            a = x.parent
        }
        return false
    }

    /// Re-observes the folder: the Local tree, keyed by item ID (identity by inode first, then
    /// by path), with content hashes for stable files (re-hashed only when the stamp changed).
    func scanLocal() async {
        dispatchPrecondition(condition: .onQueue(queue))
        // One scan at a time: a command's scan waits for a pass's (which may be hashing),
        // so an older scan's hashes never land over a newer scan's Local tree.
        while scanning { await withCheckedContinuation { scanWaiters.append($0) } }
        scanning = true
        defer {
            scanning = false
            if !scanWaiters.isEmpty { scanWaiters.removeFirst().resume() }
        }
        let scanStart = ContinuousClock.now
        // Writes the kernel has reported so far (read now, not when their events reach us).
        let writesBefore = watcher?.writes(settle: settleTime)
        // The folder is walked on another thread while this queue indexes what it knows (and a
        // fresh engine makes the planner's copy of the trees). No suspension until the Local
        // tree is replaced: a command's scan or an eviction running in between would otherwise
        // be overwritten by this walk's older view of the folder, so the walk is waited for by
        // blocking this queue, never by `await`.
        let walked = files.startScan()
        var syncedByInode: [UInt64: ItemID] = [:]
        syncedByInode.reserveCapacity(synced.count)
        for (id, s) in synced { if let st = s.stamp { syncedByInode[st.inode] = id } }
        if !treesBuilt { _ = trees() }
        let walk = walked()
        let (entries, excludedEntries) = (walk.items, walk.excluded)
        if excludedEntries != excludedLocal {
            for p in Set(excludedEntries.keys).union(excludedLocal.keys) where excludedEntries[p] != excludedLocal[p] { changeLog.note(Self.excludedID(p)) }
            excludedLocal = excludedEntries
        }
        // An item is claimed once it has an entry in `result`.
        var result: [ItemID: (path: RelativePath, entry: LocalEntry)] = [:]
        result.reserveCapacity(entries.count)

        var unassigned: [(RelativePath, LocalEntry)] = []
        // Hashes: the synced one when the stamp is unchanged (nearly every file at start-up);
        // the files listed in `check` are looked at after the claims.
        var hashes: [ItemID: ContentHash] = [:]
        hashes.reserveCapacity(entries.count)
        var check: [ItemID] = []
        // 1. Same inode as a synced item: the same item (perhaps renamed or moved). Where it also
        //    has the synced path (nearly always) no other entry can claim that item, so those are
        //    taken in any order; the rest go in path order, so hard links decide the same way
        //    every time.
        var moved: [(key: RelativePath, value: LocalEntry)] = []
        for (path, e) in entries {
            if let id = syncedByInode[e.stamp.inode], let s = synced[id], s.node.kind == e.kind, s.node.path == path {
                result[id] = (s.node.path, e)
                if e.kind == .file {
                    if s.stamp == e.stamp, let h = s.stampHash { hashes[id] = h } else { check.append(id) }
                }
            } else {
                moved.append((path, e))
            }
        }
        // A synced file renamed over another synced file (an editor's atomic save whose temporary
        // file was synced before the rename): the document keeps its identity and takes the new
        // content; the temporary item is gone.
        var replaced: [RelativePath: ItemID] = [:]
        if !moved.isEmpty {
            var syncedFileAt: [RelativePath: ItemID] = [:]
            for (id, s) in synced where s.node.kind == .file { syncedFileAt[s.node.path] = id }
            var present: Set<UInt64>?
            for (path, e) in moved where e.kind == .file {
                guard let doc = syncedFileAt[path], let tid = syncedByInode[e.stamp.inode], tid != doc, result[doc] == nil,
                      synced[tid]?.node.kind == .file, let docInode = synced[doc]?.stamp?.inode else { continue }
                if present == nil { present = Set(entries.values.map(\.stamp.inode)) }
                if !present!.contains(docInode) { replaced[path] = doc }  // the document's own file is gone, not moved
            }
        }
        for (path, e) in moved.sorted(by: { $0.key < $1.key }) {
            if let doc = replaced[path], result[doc] == nil {
                result[doc] = (sharedPath(doc, path), e)
                check.append(doc)
            } else if let id = syncedByInode[e.stamp.inode], let s = synced[id], s.node.kind == e.kind, result[id] == nil,
               s.node.path == path || entries[s.node.path]?.stamp.inode != e.stamp.inode {
                result[id] = (sharedPath(id, path), e)
                if e.kind == .file { check.append(id) }
            } else {
                unassigned.append((path, e))
            }
        }
        // 2. Same path as a synced item (content replaced, e.g. an editor's atomic save), then
        //    IDs given earlier to new items, then a server item at the same path, else a new ID.
        var syncedByPath: [RelativePath: ItemID] = [:], remoteByPath: [RelativePath: ItemID] = [:]
        if !unassigned.isEmpty {
            syncedByPath.reserveCapacity(synced.count); remoteByPath.reserveCapacity(remote.count)
            for (id, s) in synced { syncedByPath[s.node.path] = id }
            for (id, r) in remote { remoteByPath[r.node.path] = id }
        }
        for (path, e) in unassigned {
            var id: ItemID
            if let sid = syncedByPath[path], synced[sid]!.node.kind == e.kind, result[sid] == nil {
                id = sid
            } else if let nid = newLocalIDs[e.stamp.inode], result[nid] == nil, knownKind(nid) ?? e.kind == e.kind {
                id = nid
            } else if let rid = remoteByPath[path], remote[rid]!.node.kind == e.kind, result[rid] == nil, synced[rid] == nil {
                id = rid
            } else {
                id = ItemID(uuid: newUUID())
            }
            result[id] = (sharedPath(id, path), e)
            if e.kind == .file { check.append(id) }
        }
        // 3. A synced item at or under a path held by a symbolic link (or a socket, a device) is
        //    left as it was: not followed, not synced, and never taken for a deletion.
        if !walk.opaque.isEmpty {
            for (id, s) in synced where result[id] == nil {
                guard let stamp = s.stamp, s.node.kind == .folder || s.stampHash != nil, Self.isAtOrUnder(s.node.path, walk.opaque) else { continue }
                result[id] = (s.node.path, LocalEntry(kind: s.node.kind, stamp: stamp))
                if s.node.kind == .file { check.append(id) }
            }
        }
        // New items keep their IDs by identity while they exist; IDs of files and folders gone
        // from the folder are forgotten (an identity is never reused, but the map must not grow).
        var stillNew: [UInt64: ItemID] = [:]
        for (id, l) in result where synced[id] == nil { stillNew[l.entry.stamp.inode] = id }
        newLocalIDs = stillNew
        pruneClaims(stillNew)
        local.replace(with: result) { $0.path == $1.path && $0.entry == $1.entry }

        // Hashes: reuse when the stamp is unchanged; hash stable files otherwise, off the control queue.
        let now = ContinuousClock.now
        var unstableCount = 0
        var toHash: [(ItemID, String, FileStamp)] = []
        for id in check {
            let l = result[id]!
            if let s = synced[id], s.stamp == l.entry.stamp, let h = s.stampHash {
                hashes[id] = h
                continue
            }
            if let m = manifests[l.entry.stamp] { hashes[id] = m.hash; continue }
            if let t = writing[l.path], now - t < settleTime { unstableCount += 1; continue }  // still being written
            if writesBefore?.recent[l.path.string] != nil { unstableCount += 1; continue }
            toHash.append((id, files.path(l.path), l.entry.stamp))
        }
        let jobs = toHash
        let hashStart = ContinuousClock.now
        let hashed = jobs.isEmpty ? [] : await Task.detached(priority: .utility) { () -> [(ItemID, FileStamp, Result<(Manifest, FileStamp, [UInt8]?)?, Error>)] in
            Self.hashAll(jobs)
        }.value
        if !jobs.isEmpty { keptContent.removeAll(); keptContentBytes = 0 }
        dispatchPrecondition(condition: .onQueue(queue))
        if !jobs.isEmpty { logger.debug("scan: walked in \(now - scanStart), hashed \(jobs.count) file(s) in \(ContinuousClock.now - hashStart)") }
        // A write reported after the scan began means what was hashed may be a torn prefix.
        let writesAfter = watcher?.writes(settle: settleTime)
        var pathsOf: [ItemID: String] = [:]
        if let before = writesBefore?.seq, let after = writesAfter, after.seq > before {
            for (id, _, _) in jobs { pathsOf[id] = result[id]?.path.string }
        }
        for (id, expected, r) in hashed {
            if let p = pathsOf[id], let s = writesAfter?.recent[p], s > (writesBefore?.seq ?? 0) {
                unstableCount += 1
                continue
            }
            switch r {
            case .success(let got?):
                manifests[got.1] = got.0
                if got.1 == expected { hashes[id] = got.0.hash } else { unstableCount += 1 }
                if let bytes = got.2, keptContentBytes + bytes.count <= Self.keptContentLimit {
                    keptContent[got.1] = bytes
                    keptContentBytes += bytes.count
                }
            case .success(nil): unstableCount += 1  // changed while being read: try again shortly
            case .failure(let e): failed(id, error: e)
            }
        }
        unstable = unstableCount
        localHashes.replace(with: hashes, same: ==)
        if manifests.count > 10_000 { manifests.removeAll() }
    }

    /// Chunks and hashes files on every core when there are many (a big file already uses two
    /// queues of its own, so a few files stay on this thread).
    nonisolated static func hashAll(_ jobs: [(ItemID, String, FileStamp)]) -> [(ItemID, FileStamp, Result<(Manifest, FileStamp, [UInt8]?)?, Error>)] {
        typealias Hashed = (ItemID, FileStamp, Result<(Manifest, FileStamp, [UInt8]?)?, Error>)
        @Sendable func one(_ job: (ItemID, String, FileStamp)) -> Hashed {
            (job.0, job.2, Result { try LocalFiles.manifest(path: job.1, keepingUpTo: Int(batchFileLimit)) })
        }
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, jobs.count / 64)
        guard workers > 1 else { return jobs.map(one) }
        // Each worker fills its own slots (interleaved, so one worker does not get all the big
        // files of one folder); no slot is written twice.
        let out = UnsafeMutableBufferPointer<Hashed?>.allocate(capacity: jobs.count)
        out.initialize(repeating: nil)
        defer { out.deallocate() }
        nonisolated(unsafe) let slots = out
        DispatchQueue.concurrentPerform(iterations: workers) { w in
            for i in stride(from: w, to: jobs.count, by: workers) { slots[i] = one(jobs[i]) }
        }
        return (0..<jobs.count).map { (out.baseAddress! + $0).move()! }  // moved out: nothing left to deinitialize
    }

    /// The kind the server or the merge base gives an item, if either knows it: an ID is never
    /// claimed by an entry of the other kind.
    func knownKind(_ id: ItemID) -> ItemKind? { remote[id]?.node.kind ?? synced[id]?.node.kind }

    /// `path`, or an equal path the item's other trees already hold: the three nodes of an item
    /// then share one string, so the planner's copies and comparisons touch one object instead
    /// of three (at 10,000 items, the cache misses of touching three were most of a plan).
    func sharedPath(_ id: ItemID, _ path: RelativePath) -> RelativePath {
        if let p = synced[id]?.node.path, p == path { return p }
        if let p = remote[id]?.node.path, p == path { return p }
        return path
    }
}
