import Foundation
import UbiqCore

extension SyncEngine {
    /// Re-observes the folder: the Local tree, keyed by item ID (identity by inode first, then
    /// by path), with content hashes for stable files (re-hashed only when the stamp changed).
    func scanLocal() async {
        dispatchPrecondition(condition: .onQueue(queue))
        // One scan at a time: a command's scan waits for a pass's (which may be hashing),
        // so an older scan's hashes never land over a newer scan's Local tree.
        if !scanTurn.tryEnter() { await withCheckedContinuation { scanTurn.queue($0) } }
        defer { scanTurn.leave() }
        let scanStart = ContinuousClock.now
        // Writes the kernel has reported so far (read now, not when their events reach us).
        let writesBefore = watcher?.writes(settle: settleTime)
        let settledBefore = unstable == 0 && scans.unhashed == 0 && outcomes.errors.isEmpty
        // The folder is walked on another thread while this queue indexes what it knows (and a
        // fresh engine makes the planner's copy of the trees). No suspension until the Local
        // tree is replaced: a command's scan or an eviction running in between would otherwise
        // be overwritten by this walk's older view of the folder, so the walk is waited for by
        // blocking this queue, never by `await`.
        // The identity rules' indexes (O(items)) are made while a whole walk runs, and after a
        // partial one only if it found more than edits.
        var claims: IdentityClaims?
        let makeClaims = { IdentityClaims(synced: self.synced.storage, remote: self.remote.storage, newLocalIDs: self.identity.newLocalIDs, movedTo: self.sent.moves) }
        guard let (walk, dirs) = scans.read(files, watcher: watcher, now: scanStart, logger: logger, meanwhile: { whole in
            if whole { claims = makeClaims() }
            _ = trees.forPlanner()  // also brings the trees' indexes by path up to date (the claims of new entries read them)
        }) else {
            unstable = max(unstable, 1)  // things kept moving while the folder was read: the next scan decides
            return
        }
        let excludedEntries = walk.excluded
        if excludedEntries != trees.excludedLocal {
            for p in Set(excludedEntries.keys).union(trees.excludedLocal.keys) where excludedEntries[p] != trees.excludedLocal[p] { changeLog.note(ListingState.excludedID(p)) }
            trees.excludedLocal = excludedEntries
        }
        // (Only the edits, when the last scan left no file unhashed: it is looked at with the rest.)
        var (result, check, hashes, stillNew, new) = scans.claim(walk, partial: dirs != nil && settledBefore, claims: { claims ?? makeClaims() }, local: &local, synced: synced,
                                                                  remote: remote, facts: .init(newLocalIDs: identity.newLocalIDs, movedTo: sent.moves, localAt: { self.trees.localByPath[$0] },
                                                                                               syncedAt: { self.trees.syncedByPath[$0] }, remoteAt: { self.trees.remoteByPath[$0] }), newID: { ItemID(uuid: newUUID()) })
        let edited = stillNew == nil
        if let stillNew { do { try identity.keepNew(stillNew) } catch { logger.warning("\(error)") } } else { identity.newLocalIDs.merge(new) { $1 } }

        // Hashes: reuse when the stamp is unchanged; hash stable files otherwise, off the control queue.
        let now = ContinuousClock.now
        var unstableCount = 0, coordinated = 0
        var toHash: [(ItemID, String, FileStamp)] = []
        for id in check {
            guard let l = result[id] ?? local[id] else { continue }
            if let s = synced[id], s.stamp == l.entry.stamp, let h = s.stampHash {
                hashes[id] = h
                continue
            }
            if let m = contents.manifest(for: l.entry.stamp) { hashes[id] = m.hash; continue }
            if scheduler.isBeingWritten(l.path, now: now) { unstableCount += 1; continue }  // still being written
            if coordination.beingWritten(l.path.string) { coordinated += 1; continue }  // a program writes it (it asks for a pass when done)
            if writesBefore?.recent[l.path.string] != nil { unstableCount += 1; continue }
            toHash.append((id, files.path(l.path), l.entry.stamp))
        }
        let jobs = toHash
        let chunker = files.chunker
        let hashStart = ContinuousClock.now
        let hashed = jobs.isEmpty ? [] : await Task.detached(priority: .utility) { () -> [(ItemID, FileStamp, Result<(Manifest, FileStamp, [UInt8]?)?, Error>)] in
            LocalFiles.hashAll(jobs, chunker: chunker)
        }.value
        if !jobs.isEmpty { contents.dropKept() }
        dispatchPrecondition(condition: .onQueue(queue))
        if !jobs.isEmpty { logger.debug("scan: walked in \(now - scanStart), hashed \(jobs.count) file(s) in \(ContinuousClock.now - hashStart)") }
        // A write reported after the scan began means what was hashed may be a torn prefix.
        let writesAfter = watcher?.writes(settle: settleTime)
        var pathsOf: [ItemID: String] = [:]
        if let before = writesBefore?.seq, let after = writesAfter, after.seq > before {
            for (id, _, _) in jobs { pathsOf[id] = (result[id] ?? local[id])?.path.string }
        }
        for (id, expected, r) in hashed {
            if let p = pathsOf[id], let s = writesAfter?.recent[p], s > (writesBefore?.seq ?? 0) {
                unstableCount += 1
                continue
            }
            switch r {
            case .success(let got?):
                contents.note(got.0, for: got.1)
                if got.1 == expected { hashes[id] = got.0.hash } else { unstableCount += 1 }
                if let bytes = got.2 { contents.keep(bytes, for: got.1) }
            case .success(nil): unstableCount += 1  // changed while being read: try again shortly
            case .failure(let e): failed(id, error: e)
            }
        }
        unstable = unstableCount
        scans.unhashed = coordinated
        if edited {
            for id in check where localHashes[id] != hashes[id] { localHashes[id] = hashes[id] }
        } else {
            localHashes.replace(with: hashes, same: ==)
        }
        contents.trim()
    }
}
