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
        let changes = watcher?.takeChanges()
        let movesBefore = changes?.structural
        // The folder is walked on another thread while this queue indexes what it knows (and a
        // fresh engine makes the planner's copy of the trees). No suspension until the Local
        // tree is replaced: a command's scan or an eviction running in between would otherwise
        // be overwritten by this walk's older view of the folder, so the walk is waited for by
        // blocking this queue, never by `await`.
        // When nothing moved or was removed since the last walk and the watcher saw every
        // folder, only the folders where something happened are read again (#42: one new file
        // among 200,000 walked them all).
        let dirs = changes.flatMap { scans.partial(since: $0, watcherComplete: watcher?.isComplete() == true, now: scanStart) }
        let walked = dirs.map { files.startScan(only: $0, over: scans.lastWalk!.scan) } ?? files.startScan()
        if dirs == nil {
            logger.debug("scan: the whole folder (moves and removals \(changes.map { "\($0.structural)" } ?? "-"), at the last walk \(scans.lastWalk.map { "\($0.structural)" } ?? "-"), \(changes?.dirty.count ?? 0) folder(s) changed)")
        }
        scans.lastWalk = nil  // until this walk is done and calm
        let claims = IdentityClaims(synced: synced.storage, remote: remote.storage, newLocalIDs: identity.newLocalIDs, movedTo: sent.moves)
        if !trees.planned { _ = trees.forPlanner() }
        var walk = walked()
        // The walk is not one instant: a folder moved while it ran can be seen at both places
        // (its old place read before the move, its new one after) or at neither. Seen twice,
        // the copy at the new place took a new ID and the item at the old place was deleted
        // with what it held — files other devices had put in it ended in the trash. So when
        // something moved or was removed during the walk, the folder is walked again; if it
        // keeps changing, this scan is dropped (the Local tree stays as the last calm walk saw
        // it) and another follows shortly.
        var whole = dirs == nil
        if let w = watcher, var seen = movesBefore {
            var walks = 1
            while case let now = w.structuralEvents(), now != seen {
                guard walks < 3 else {
                    logger.debug("scan: things moved in the folder while it was read, \(walks) times; the next scan decides")
                    unstable = max(unstable, 1)
                    return
                }
                seen = now
                walk = files.scan()
                whole = true
                walks += 1
            }
            scans.lastWalk = (walk, seen)  // exact as long as the count stays `seen`
        }
        if whole { scans.lastFull = scanStart; scans.fullWalks += 1 } else { scans.partialWalks += 1 }
        let (entries, excludedEntries) = (walk.items, walk.excluded)
        if excludedEntries != trees.excludedLocal {
            for p in Set(excludedEntries.keys).union(trees.excludedLocal.keys) where excludedEntries[p] != trees.excludedLocal[p] { changeLog.note(ListingState.excludedID(p)) }
            trees.excludedLocal = excludedEntries
        }
        let result: [ItemID: (path: RelativePath, entry: LocalEntry)], check: [ItemID]
        var hashes: [ItemID: ContentHash]
        // Only edits in the folders read again (every name there is an item the Local tree has
        // at that name, with its identity): those entries change, nothing else does.
        // (Not while the last scan left a file unhashed: it is looked at again with the rest.)
        let edited = dirs == nil || !settledBefore ? nil : Self.edits(walk.reread, local: local, synced: synced, at: scans.idsByPath)
        if let edited {
            result = edited.changed
            check = edited.check
            hashes = [:]
            for (id, l) in result { local[id] = l }
            #if DEBUG
            let whole = claims.claim(entries, opaque: walk.opaque, newID: { ItemID(uuid: newUUID()) }).result
            precondition(whole.count == local.count && whole.allSatisfy { id, l in local[id].map { $0.path == l.path && $0.entry == l.entry } ?? false },
                         "the claims of the edits differ from the claims of the whole folder")
            #endif
        } else {
            let claimed = claims.claim(entries, opaque: walk.opaque, newID: { ItemID(uuid: newUUID()) })
            result = claimed.result
            check = claimed.check
            hashes = (consume claimed).hashes  // the one reference left: its writes below copy nothing
            // New items keep their IDs by identity while they exist; IDs of files and folders gone
            // from the folder are forgotten (an identity is never reused, but the map must not grow).
            var stillNew: [UInt64: ItemID] = [:]
            for (id, l) in result where synced[id] == nil { stillNew[l.entry.stamp.inode] = id }
            do { try identity.keepNew(stillNew) } catch { logger.warning("\(error)") }
            local.replace(with: result) { $0.path == $1.path && $0.entry == $1.entry }
            scans.idsByPath = Dictionary(result.lazy.map { ($0.value.path, $0.key) }, uniquingKeysWith: { a, _ in a })
        }

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
        if edited != nil {
            for id in check where localHashes[id] != hashes[id] { localHashes[id] = hashes[id] }
        } else {
            localHashes.replace(with: hashes, same: ==)
        }
        contents.trim()
    }

    /// The Local tree's changes when every entry a partial walk read again is an item it already
    /// has at that path with the same identity and kind (edits and attribute changes: nothing
    /// new, since nothing moved or was removed); nil otherwise (the whole folder is claimed).
    /// `check`: the files whose stamps changed (their hashes are looked at again).
    static func edits(_ reread: [RelativePath: LocalEntry]?, local: TrackedMap<(path: RelativePath, entry: LocalEntry)>,
                      synced: TrackedMap<SyncedEntry>, at ids: [RelativePath: ItemID]) -> (changed: [ItemID: (path: RelativePath, entry: LocalEntry)], check: [ItemID])? {
        guard let reread else { return nil }
        var changed: [ItemID: (path: RelativePath, entry: LocalEntry)] = [:], check: [ItemID] = []
        for (p, e) in reread {
            guard let id = ids[p], let l = local[id], l.path == p, l.entry.kind == e.kind, l.entry.stamp.inode == e.stamp.inode else { return nil }
            if l.entry != e { changed[id] = (l.path, e) }
            // As the claims of the whole folder do, a file whose stamp is not the merge base's (with
            // its hash) is looked at; so is one whose stamp changed (its hash is the base's again,
            // or new).
            if e.kind == .file, l.entry != e || synced[id].map({ $0.stamp != e.stamp || $0.stampHash == nil }) ?? true { check.append(id) }
        }
        return (changed, check)
    }
}
