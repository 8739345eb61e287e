/// The pure planner: compares the Remote, Local and Synced trees and returns the operations that
/// bring them together. It never performs anything; the engine executes the batch, records each
/// result in the Synced tree, re-observes and plans again until the batch is empty.
public enum Planner {
    /// Download policy of the device (`onDemand` devices fetch content only when asked).
    public enum Policy: Sendable { case all, onDemand }

    /// - Parameters:
    ///   - pinned: items whose content an on-demand device was asked to keep.
    ///   - pinnedFolders: the server's paths of pinned folders: everything the Remote tree has
    ///     in one is kept too (looked up per item the plan meets, not gathered from every item).
    ///   - evicted: items whose local content was dropped on request (absent from the folder,
    ///     still listed); they are not downloaded again until asked, and their absence is not a delete.
    ///   - streaming: items whose current version another device is still uploading that may be
    ///     downloaded as its chunks arrive (otherwise a version is downloaded once it is complete).
    ///   - abandoned: versions this device committed whose content it stopped uploading because
    ///     the file changed or went away; where the file is gone here, the item is deleted on
    ///     the server (the user deleted it before its content went up), not waited for.
    ///   - only: the items that may have something to do (`isOpen`), when the caller keeps them
    ///     (the engine does, from what it wrote since the last plan): the others agree on all
    ///     three sides, and an item that agrees has nothing to do whatever the others are — so a
    ///     plan costs what changed, not the account's size. Nil: every item is looked at.
    ///   - byPath: each tree's items by path, when the caller keeps them (the engine does); nil:
    ///     made from the trees when a plan first needs one.
    public static func plan(_ t: SyncTrees, policy: Policy = .all, pinned: Set<ItemID> = [], pinnedFolders: [RelativePath] = [], evicted: Set<ItemID> = [],
                            streaming: Set<ItemID> = [], abandoned: Set<VersionID> = [], only: Set<ItemID>? = nil,
                            byPath: (remote: [RelativePath: ItemID], local: [RelativePath: ItemID], synced: [RelativePath: ItemID])? = nil) -> [SyncOp] {
        func inPinnedFolder(_ id: ItemID) -> Bool {
            guard !pinnedFolders.isEmpty, let r = t.remote[id] else { return false }
            return pinnedFolders.contains { r.path.isSelfOrDescendant(of: $0) }
        }
        func wanted(_ id: ItemID) -> Bool { pinned.contains(id) || (policy == .all && !evicted.contains(id)) || inPinnedFolder(id) }
        func fetchable(_ id: ItemID, _ r: RemoteNode) -> Bool { r.uploaded || streaming.contains(id) }
        var ops: [SyncOp] = []
        // Local items that hold something not yet on the server (new or edited): their folders
        // must stay. Made when first needed (a server-side folder delete), like `remoteAt`: a
        // plan over thousands of items that agree should cost little more than looking at each.
        var unsafeLocal: [RelativePath]?
        func unsafeLocalPaths() -> [RelativePath] {
            if let u = unsafeLocal { return u }
            let u = t.local.compactMap { id, l -> RelativePath? in
                guard let s = t.synced[id] else { return l.path }
                return (l.kind == .file && l.hash != nil && l.hash != s.hash && l.hash != s.conflictHash) ? l.path : nil
            }
            unsafeLocal = u
            return u
        }
        // Items by path on each side, made when first needed.
        func index<N>(_ nodes: [ItemID: N], _ path: (N) -> RelativePath) -> [RelativePath: ItemID] {
            var m: [RelativePath: ItemID] = [:]
            m.reserveCapacity(nodes.count)
            for (id, n) in nodes { m[path(n)] = id }
            return m
        }
        var remoteAtMap = byPath?.remote, localAtMap = byPath?.local
        func remoteAt(_ p: RelativePath) -> ItemID? {
            if remoteAtMap == nil { remoteAtMap = index(t.remote, \.path) }
            return remoteAtMap![p]
        }
        func localAt(_ p: RelativePath) -> ItemID? {
            if localAtMap == nil { localAtMap = index(t.local, \.path) }
            return localAtMap![p]
        }
        // New local items (never synced) by path: a server move onto one of them cannot be
        // applied locally, so the local position wins instead.
        var newLocalPaths: Set<RelativePath>?
        func newLocalAt(_ p: RelativePath) -> Bool {
            if newLocalPaths == nil {
                var set: Set<RelativePath> = []
                for (id, l) in t.local where t.synced[id] == nil { set.insert(l.path) }
                newLocalPaths = set
            }
            return newLocalPaths!.contains(p)
        }
        // A local step into a folder the server has waits until that folder is where the server
        // has it locally (it may be pending a local move); otherwise `mkdir -p` would invent a twin.
        func parentReady(_ p: RelativePath) -> Bool {
            var a = p.parent
            while let ancestor = a {
                if let rp = remoteAt(ancestor), let lp = t.local[rp], lp.path != ancestor { return false }
                a = ancestor.parent
            }
            return true
        }
        func holdsNews(_ folder: RelativePath, deletedAt old: RelativePath) -> Bool {
            news(in: t, under: folder, deletedAt: old, wanted: wanted, abandoned: abandoned) != nil
        }
        // A folder above `p` that this device deleted and that stays deleted (it holds no news):
        // what the server has under it goes with its delete — making it here would `mkdir` the
        // deleted folder back (#45, seed 403: a never-seen empty subfolder did).
        func goesWithADelete(_ p: RelativePath) -> Bool {
            var a = p.parent
            while let ancestor = a {
                if let f = remoteAt(ancestor), let fs = t.synced[f], t.local[f] == nil, let fr = t.remote[f], fr.kind == .folder,
                   fr.version == fs.version, fs.kind == .folder {
                    return !holdsNews(fr.path, deletedAt: fs.path)
                }
                a = ancestor.parent
            }
            return false
        }
        // The merge base of an item moved on both sides to different places, when a folder above
        // it moved on both sides to the same place (another device did the same, or the answer to
        // this device's own move was lost): its base moves with that folder, so only the side that
        // moved the item itself counts as a move. Otherwise the server's place won and a user's
        // move out of the folder was undone.
        // Likewise when the folder moved on the server only and the item rode along there, while
        // here the item was moved out of the folder by itself (the folder staying where it was, or
        // deleted): the item's own move is this device's, and it wins. Taking the server's place
        // put the file back into the folder the user had emptied and deleted — and the folder's
        // delete then took it to the trash (the randomized runs: a file lost from every device).
        var syncedAtMap = byPath?.synced
        func baseMovedWithFolders(_ s: SyncedNode, local l: LocalNode, remote r: RemoteNode) -> SyncedNode {
            if syncedAtMap == nil { syncedAtMap = index(t.synced, \.path) }
            var a = s.path.parent
            while let ancestor = a {
                if let f = syncedAtMap![ancestor], let fr = t.remote[f] {
                    let fl = t.local[f]
                    if let fl, fl.path == fr.path, fl.path != ancestor {
                        var moved = s
                        moved.path = s.path.rebased(from: ancestor, to: fl.path)
                        return moved
                    }
                    if fr.path != ancestor, fl == nil || fl?.path == ancestor, !l.path.isSelfOrDescendant(of: ancestor),
                       r.path == s.path.rebased(from: ancestor, to: fr.path) {
                        var moved = s
                        moved.path = r.path
                        return moved
                    }
                }
                a = ancestor.parent
            }
            return s
        }
        // Items are looked at in any order; those with operations are put in ID order after.
        var planned: [(id: ItemID, ops: [SyncOp])] = []
        func planOne(_ id: ItemID) {
            planItem(id)
            if ops.isEmpty { return }
            // Local steps that put something at a server path wait until its folders are in place.
            let kept = ops.filter { op in
                switch op {
                case .createLocalFolder(let i): return t.remote[i].map { parentReady($0.path) } ?? true
                case .download(let i, _) where t.local[i] == nil: return t.remote[i].map { parentReady($0.path) } ?? true
                case .moveLocal(_, let to): return parentReady(to)
                default: return true
                }
            }
            ops.removeAll(keepingCapacity: true)
            if !kept.isEmpty { planned.append((id, kept)) }
        }
        // Every item is in one of the trees; counting the local and synced nodes met on the way
        // spares looking at those trees again when all of them were met.
        if let only {
            for id in only where isOpen(id, in: t) { planOne(id) }
            planned.sort { $0.id < $1.id }
            let some = planned.flatMap(\.ops)
            #if DEBUG
            // Tests hold the plan over the open items to the plan over every item.
            if t.remote.count + t.local.count < 20_000 {
                let whole = plan(t, policy: policy, pinned: pinned, pinnedFolders: pinnedFolders, evicted: evicted, streaming: streaming, abandoned: abandoned)
                precondition(some == whole, "the plan over the open items \(some) is not the plan over all \(whole)")
            }
            #endif
            return some
        }
        var localMet = 0, syncedMet = 0
        for (id, r) in t.remote {
            let s = t.synced[id], l = t.local[id]
            if s != nil { syncedMet += 1 }
            if l != nil { localMet += 1 }
            if let s, let l, agree(s, l, r) { continue }
            planOne(id)
        }
        if localMet < t.local.count {
            for id in t.local.keys where t.remote[id] == nil {
                if t.synced[id] != nil { syncedMet += 1 }
                planOne(id)
            }
        }
        if syncedMet < t.synced.count {
            for id in t.synced.keys where t.remote[id] == nil && t.local[id] == nil { planOne(id) }
        }
        planned.sort { $0.id < $1.id }
        return planned.flatMap(\.ops)

        func planItem(_ id: ItemID) {
            let s = t.synced[id], l = t.local[id], r = t.remote[id]
            switch (s, l, r) {
            case (nil, nil, nil):
                break
            case (nil, let l?, nil):
                if l.kind == .folder { ops.append(.createRemoteFolder(id)) } else if l.hash != nil { ops.append(.upload(id, base: nil)) }
            case (nil, nil, let r?) where r.kind == .file && !r.uploaded && r.version.map(abandoned.contains) == true:
                ops.append(.deleteRemote(id))
            case (nil, nil, let r?):
                if r.kind == .folder {
                    if !goesWithADelete(r.path) { ops.append(.createLocalFolder(id)) }
                } else if fetchable(id, r), let v = r.version, wanted(id) {
                    ops.append(.download(id, version: v))
                }
            case (nil, let l?, let r?):
                if l.kind != r.kind { break }  // the engine renames one side before this can arise
                if l.kind == r.kind, l.kind == .file, l.hash != nil, l.hash == r.hash, !r.uploaded {
                    ops.append(.upload(id, base: r.version))  // same content, unfinished upload (ours, before a crash): finish it
                } else if l.kind == .folder || l.hash == r.hash {
                    ops.append(.markSynced(id))
                } else if l.hash != nil {
                    ops.append(.upload(id, base: nil))
                }
            case (_?, nil, nil):
                ops.append(.forget(id))
            case (let s?, let l?, nil):
                // Deleted on the server.
                if l.kind == .folder {
                    // Keep (revive) the folder while it holds unsynced content, items the server
                    // still has inside it, or items the user moved into it here.
                    let keep = unsafeLocalPaths().contains { $0 != l.path && $0.isSelfOrDescendant(of: l.path) }
                        || t.local.contains { cid, c in c.path != l.path && c.path.isSelfOrDescendant(of: l.path)
                            && ((t.remote[cid].map { $0.path.isSelfOrDescendant(of: l.path) } ?? false)
                                || (t.synced[cid].map { $0.path != c.path } ?? false)) }
                    ops.append(keep ? .createRemoteFolder(id) : .deleteLocal(id))
                } else if l.hash == nil {
                    break  // still being written: decide once it is stable
                } else if l.hash == s.hash || l.hash == s.conflictHash {
                    ops.append(.deleteLocal(id))
                } else {
                    ops.append(.upload(id, base: s.version))  // edit against delete: the edit wins
                }
            case (_?, nil, _?) where evicted.contains(id) && r?.kind == .file:
                // Evicted: the merge base is kept only until the engine forgets it.
                ops.append(.forget(id))
            case (let s?, nil, let r?):
                // Deleted locally.
                if r.kind == .file && !r.uploaded && r.version.map(abandoned.contains) == true {
                    ops.append(.deleteRemote(id))
                } else if r.version == s.version && r.kind == s.kind {
                    // A folder holding something this device has not seen deleted (another
                    // device's edit, or an item moved in) comes back instead: no user deleted that.
                    ops.append(r.kind == .folder && holdsNews(r.path, deletedAt: s.path) ? .createLocalFolder(id) : .deleteRemote(id))
                } else if r.kind == .folder {
                    ops.append(.createLocalFolder(id))
                } else if fetchable(id, r), let v = r.version {
                    ops.append(.download(id, version: v))  // remote edit against local delete: the edit wins
                }
            case (var s?, let l?, let r?):
                if l.path != s.path && r.path != s.path && l.path != r.path { s = baseMovedWithFolders(s, local: l, remote: r) }
                var both = planBoth(id, s, l, r, blocked: l.path != r.path && newLocalAt(r.path), fetchable: fetchable(id, r))
                if let i = both.firstIndex(where: \.isRemoteMove), case .moveRemote(_, let to) = both[i], let parent = to.parent {
                    // The server applies a move to its own paths: the local parent must be the
                    // server's folder at that path. A folder above the destination (the parent,
                    // or one further up) that the server has inside this very item (another
                    // device moved it there first) is a cycle: the server's order wins and the
                    // item goes back where the server has it. Any other mismatch waits for the
                    // parent's own step. (Only the parent was looked at: with the cycle one
                    // level further up, each side waited for the other for ever.)
                    var cycle: (path: RelativePath, item: ItemID, remote: RemoteNode)?
                    var above: RelativePath? = parent
                    while let a = above, cycle == nil {
                        if let la = localAt(a), la != id, let ra = t.remote[la], ra.path.isSelfOrDescendant(of: r.path) { cycle = (a, la, ra) }
                        above = a.parent
                    }
                    if let c = cycle {
                        // Unless that folder is on its own way out of this item, moved there and
                        // not yet on the server (a folder moved out of another, then the other
                        // moved into it): its move goes first, and this one waits for it — if it
                        // can go: its new parent is where the server has it too. (Not so when
                        // another device moved that parent into this item: the parent waited for
                        // this item, this item for the folder, the folder for the parent.)
                        let canGo = c.path.parent.map { p in localAt(p).map { remoteAt(p) == $0 } ?? false } ?? true
                        let leaving = t.synced[c.item]?.path == c.remote.path && c.path != c.remote.path && canGo
                        if leaving { both.remove(at: i) } else { both[i] = .moveLocal(id, to: r.path) }
                    } else if let lp = localAt(parent), remoteAt(parent) == lp {
                        // The server has the local parent at that path: the move goes up.
                    } else {
                        both.remove(at: i)
                    }
                }
                ops += both
            }
        }
    }

    /// An item the server has under a folder this device deleted that the delete did not cover
    /// (a file the device never had, one edited or moved in elsewhere since, a folder moved in),
    /// if any: the folder
    /// comes back for it. A version this device committed and abandoned (the file went away
    /// before its content went up) is no news: it is deleted with the folder. Named in the
    /// engine's log when a deleted folder comes back.
    public static func news(in t: SyncTrees, under folder: RelativePath, deletedAt old: RelativePath, wanted: (ItemID) -> Bool,
                            abandoned: Set<VersionID>) -> ItemID? {
        t.remote.first { cid, c in
            guard c.path != folder, c.path.isSelfOrDescendant(of: folder) else { return false }
            if c.kind == .file, !c.uploaded, let v = c.version, abandoned.contains(v) { return false }
            // A folder this device never had is no content by itself: what it holds is looked at
            // in its own right (it is under `folder` too). An empty one — made here with its
            // answer lost, or by another device — goes with the delete (#45, seed 403: such a
            // folder brought two deleted folders back, empty, on every device).
            guard let cs = t.synced[cid] else { return c.kind == .folder ? t.local[cid] != nil : wanted(cid) || t.local[cid] != nil }
            return cs.version != c.version || cs.kind != c.kind || !cs.path.isSelfOrDescendant(of: old)
        }?.key
    }

    /// False when the item is the same on all three sides (`agree`) or in none: the planner has
    /// nothing for it, whatever the other items are.
    public static func isOpen(_ id: ItemID, in t: SyncTrees) -> Bool {
        let r = t.remote[id], s = t.synced[id], l = t.local[id]
        if let s, let l, let r { return !agree(s, l, r) }
        return r != nil || s != nil || l != nil
    }

    /// True when an item is the same on all three sides, so `planBoth` has nothing for it: the
    /// check a plan over thousands of items in sync makes for nearly every one (a property test
    /// holds it to `planBoth`).
    static func agree(_ s: SyncedNode, _ l: LocalNode, _ r: RemoteNode) -> Bool {
        guard s.version == r.version, l.kind == r.kind, l.path == s.path, r.path == s.path else { return false }
        if l.kind == .folder { return s.hash == r.hash }
        guard let lh = l.hash else { return true }  // still being written: nothing is decided yet
        return lh == s.hash && lh != s.conflictHash
    }

    /// - Parameters:
    ///   - blocked: a new local item sits at the server's path for this item.
    ///   - fetchable: the remote version's content may be downloaded (complete, or streaming).
    static func planBoth(_ id: ItemID, _ s: SyncedNode, _ l: LocalNode, _ r: RemoteNode, blocked: Bool, fetchable: Bool) -> [SyncOp] {
        var ops: [SyncOp] = []
        // Paths: a move on one side is applied to the other; when both moved, the server's wins.
        let lMoved = l.path != s.path, rMoved = r.path != s.path
        if (lMoved && !rMoved) || (rMoved && blocked) {
            ops.append(.moveRemote(id, to: l.path))
        } else if rMoved && l.path != r.path {
            if l.kind == .folder && r.path.isSelfOrDescendant(of: l.path) {
                // A cycle (each side moved one folder into the other): keep this folder where it is
                // locally, which the server can always do.
                ops.append(.moveRemote(id, to: l.path))
            } else {
                ops.append(.moveLocal(id, to: r.path))
            }
        }
        if l.kind != r.kind { return ops }
        if l.kind == .folder {
            if !lMoved && !rMoved && (s.version != r.version || s.hash != r.hash) { ops.append(.markSynced(id)) }
            if lMoved && rMoved && l.path == r.path { ops.append(.markSynced(id)) }
            return ops
        }
        guard let lh = l.hash else { return ops }  // not stable yet
        if lh == r.hash && !r.uploaded && s.version != r.version {
            // The server lists this content but lacks some of it: send what it lacks. (With the
            // version already synced, this device downloaded it while another still uploads it.)
            return ops + [.upload(id, base: r.version)]
        }
        let lChanged = lh != s.hash
        let rChanged = r.version != s.version
        if let ch = s.conflictHash, lh == ch {
            // Our content is stored as a conflict version: take the current version back.
            if fetchable, let v = r.version { ops.append(.download(id, version: v)) }
        } else if lChanged && !rChanged {
            ops.append(.upload(id, base: s.version))
        } else if !lChanged && rChanged {
            if r.hash == lh {
                ops.append(.markSynced(id))
            } else if fetchable, let v = r.version {
                ops.append(.download(id, version: v))  // a file with local content is kept current
            }
        } else if lChanged && rChanged {
            ops.append(lh == r.hash ? .markSynced(id) : .upload(id, base: s.version))
        } else if lMoved && rMoved && l.path == r.path {
            ops.append(.markSynced(id))
        }
        return ops
    }
}
