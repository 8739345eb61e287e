import Foundation
import UbiqCore
import UbiqTesting

/// A deterministic model of one device's folder plus the server, on which planner batches are
/// applied "as if they succeeded" (CanopyCheck style). Each op does what the engine and server
/// do, including refusing unsafe steps (a download never overwrites unsynced local content).
struct SyncModel {
    var t = SyncTrees()
    /// Server-side trash: deleted items, restorable by a later upload (edit against delete).
    var trashed: [ItemID: RemoteNode] = [:]
    /// Every content the server ever stored (current, conflict or history).
    var serverVersions: Set<ContentHash> = []
    /// Contents written by the local user that must reach the server.
    var localWrites: Set<ContentHash> = []
    /// Items whose local content the user evicted (listed, absent from the folder).
    var evicted: Set<ItemID> = []
    /// Remote versions still being uploaded by another device that may be downloaded meanwhile.
    var streaming: Set<ItemID> = []
    /// Items an on-demand user asked to download.
    var pinned: Set<ItemID> = []
    var rng: SeededRandom

    init(rng: SeededRandom) { self.rng = rng }

    /// The three trees as text, for replaying a failing case.
    func dump() -> String {
        let ids = Set(t.local.keys).union(t.remote.keys).union(t.synced.keys).sorted()
        return ids.map { id in
            let l = t.local[id].map { "\($0.kind) \($0.path) \($0.hash?.hex.prefix(6) ?? "-")" } ?? "·"
            let r = t.remote[id].map { "\($0.kind) \($0.path) \($0.hash?.hex.prefix(6) ?? "-") v\($0.version?.description.prefix(4) ?? "-")" } ?? (trashed[id] != nil ? "trashed" : "·")
            let s = t.synced[id].map { "\($0.path) \($0.hash?.hex.prefix(6) ?? "-") v\($0.version?.description.prefix(4) ?? "-") c\($0.conflictHash?.hex.prefix(6) ?? "-")" } ?? "·"
            return "\(id.description.prefix(8))  L[\(l)]  R[\(r)]  S[\(s)]"
        }.joined(separator: "\n")
    }

    mutating func newID() -> ItemID { ItemID(uuid: UUID(uuid: uuidBytes())) }
    mutating func newVersion() -> VersionID { VersionID(uuid: UUID(uuid: uuidBytes())) }
    mutating func uuidBytes() -> uuid_t {
        let a = rng.next(), b = rng.next()
        return withUnsafeBytes(of: (a, b)) { raw in raw.load(as: uuid_t.self) }
    }
    mutating func newHash() -> ContentHash { ContentHash.of(rng.bytes(16)) }

    func liveRemote(at p: RelativePath, except: ItemID? = nil) -> ItemID? { t.remote.first { $0.value.path == p && $0.key != except }?.key }
    func liveLocal(at p: RelativePath, except: ItemID? = nil) -> ItemID? { t.local.first { $0.value.path == p && $0.key != except }?.key }

    /// The devices still uploading finish: every remote version is complete. True if any was not.
    @discardableResult
    mutating func finishUploads() -> Bool {
        var any = false
        for (id, r) in t.remote where !r.uploaded { t.remote[id]!.uploaded = true; any = true }
        for (id, r) in trashed where !r.uploaded { trashed[id]!.uploaded = true; any = true }
        streaming = []
        return any
    }

    // MARK: applying planner operations

    mutating func apply(_ op: SyncOp) {
        switch op {
        case .upload(let id, let base): upload(id, base: base)
        case .createRemoteFolder(let id): createRemoteFolder(id)
        case .moveRemote(let id, let to): moveRemote(id, to: to)
        case .deleteRemote(let id): deleteRemote(id)
        case .download(let id, let v): download(id, version: v)
        case .createLocalFolder(let id): createLocalFolder(id)
        case .moveLocal(let id, let to): moveLocal(id, to: to)
        case .deleteLocal(let id): deleteLocal(id)
        case .markSynced(let id): markSynced(id)
        case .forget(let id): t.synced[id] = nil
        }
    }

    mutating func upload(_ id: ItemID, base: VersionID?) {
        guard let l = t.local[id], l.kind == .file, let h = l.hash else { return }
        if let r = t.remote[id] {
            guard r.kind == .file else { return }
            serverVersions.insert(h)
            let sPath = t.synced[id]?.path ?? r.path
            if r.hash == h {
                t.synced[id] = SyncedNode(path: sPath, kind: .file, version: r.version, hash: h)
            } else if base == r.version || r.version == nil {
                let v = newVersion()
                t.remote[id]!.version = v
                t.remote[id]!.hash = h
                t.synced[id] = SyncedNode(path: sPath, kind: .file, version: v, hash: h)
            } else {
                var s = t.synced[id] ?? SyncedNode(path: sPath, kind: .file, version: nil, hash: nil)
                s.conflictHash = h
                t.synced[id] = s
            }
        } else if var dead = trashed[id] {
            // Edit against delete: the item comes back (at its old path if free) with the edit.
            let path = liveRemote(at: dead.path) == nil ? dead.path : l.path
            guard liveRemote(at: path) == nil else { return }
            serverVersions.insert(h)
            dead.path = path
            dead.version = newVersion()
            dead.hash = h
            trashed[id] = nil
            t.remote[id] = dead
            reviveAncestors(of: path)
            t.synced[id] = SyncedNode(path: t.synced[id]?.path ?? path, kind: .file, version: dead.version, hash: h)
        } else if let other = liveRemote(at: l.path) {
            // The server merges a new file at a taken path into that item: one item, a conflict
            // unless the content is identical. The local file answers to the server's ID.
            guard t.remote[other]!.kind == .file, t.local[other] == nil else { return }
            serverVersions.insert(h)
            let r = t.remote[other]!
            t.local[other] = l
            t.local[id] = nil
            evicted.remove(other)
            t.synced[other] = r.hash == h ? SyncedNode(path: r.path, kind: .file, version: r.version, hash: h)
                : SyncedNode(path: r.path, kind: .file, version: nil, hash: nil, conflictHash: h)
        } else {
            serverVersions.insert(h)
            let v = newVersion()
            t.remote[id] = RemoteNode(path: l.path, kind: .file, version: v, hash: h)
            reviveAncestors(of: l.path)
            t.synced[id] = SyncedNode(path: l.path, kind: .file, version: v, hash: h)
        }
    }

    mutating func reviveAncestors(of p: RelativePath) {
        var a = p.parent
        while let ap = a {
            if liveRemote(at: ap) == nil, let dead = trashed.sortedByID.first(where: { $0.value.path == ap && $0.value.kind == .folder }) {
                t.remote[dead.key] = dead.value
                trashed[dead.key] = nil
            }
            a = ap.parent
        }
    }

    mutating func createRemoteFolder(_ id: ItemID) {
        guard let l = t.local[id], l.kind == .folder, t.remote[id] == nil else { return }
        var node = trashed[id] ?? RemoteNode(path: l.path, kind: .folder, version: nil, hash: nil)
        if liveRemote(at: node.path) != nil { node.path = l.path }
        guard liveRemote(at: node.path) == nil else { return }
        trashed[id] = nil
        t.remote[id] = node
        reviveAncestors(of: node.path)
        t.synced[id] = SyncedNode(path: t.synced[id]?.path ?? node.path, kind: .folder, version: nil, hash: nil)
    }

    mutating func moveRemote(_ id: ItemID, to: RelativePath) {
        guard let r = t.remote[id], liveRemote(at: to, except: id) == nil, !(r.kind == .folder && to.isSelfOrDescendant(of: r.path) && to != r.path) else { return }
        // The engine's moves name their folder: the one this device has at the parent path.
        if let parent = to.parent {
            guard let lp = liveLocal(at: parent), liveRemote(at: parent) == lp, t.remote[lp]?.kind == .folder else { return }
        }
        let old = r.path
        for (k, v) in t.remote where v.path.isSelfOrDescendant(of: old) { t.remote[k]!.path = v.path.rebased(from: old, to: to) }
        for (k, v) in t.synced where v.path.isSelfOrDescendant(of: old) && t.remote[k] != nil { t.synced[k]!.path = v.path.rebased(from: old, to: to) }
        reviveAncestors(of: to)
    }

    mutating func deleteRemote(_ id: ItemID) {
        guard let r = t.remote[id] else { return }
        for (k, v) in t.remote where v.path.isSelfOrDescendant(of: r.path) {
            trashed[k] = v
            t.remote[k] = nil
        }
        t.synced[id] = nil
    }

    /// Creates missing local parent folders as the engine's `mkdir -p` + scan would: a folder the
    /// server has at that path keeps the server's ID.
    mutating func ensureLocalParents(of p: RelativePath) {
        var chain: [RelativePath] = []
        var a = p.parent
        while let ap = a { chain.insert(ap, at: 0); a = ap.parent }
        for ap in chain where liveLocal(at: ap) == nil {
            if let rid = liveRemote(at: ap), t.remote[rid]!.kind == .folder, t.local[rid] == nil {
                t.local[rid] = LocalNode(path: ap, kind: .folder, hash: nil)
            } else {
                t.local[newID()] = LocalNode(path: ap, kind: .folder, hash: nil)
            }
        }
    }

    func localIsSafeToReplace(_ id: ItemID) -> Bool {
        guard let l = t.local[id] else { return true }
        guard let s = t.synced[id] else { return false }
        return l.hash == s.hash || l.hash == s.conflictHash
    }

    mutating func download(_ id: ItemID, version: VersionID) {
        guard let r = t.remote[id], r.kind == .file, r.version == version, localIsSafeToReplace(id) else { return }
        let target = t.local[id]?.path ?? r.path
        if liveLocal(at: target, except: id) != nil { return }
        ensureLocalParents(of: target)
        t.local[id] = LocalNode(path: target, kind: .file, hash: r.hash)
        let sPath = target == r.path ? r.path : (t.synced[id]?.path ?? target)
        t.synced[id] = SyncedNode(path: sPath, kind: .file, version: r.version, hash: r.hash)
    }

    mutating func createLocalFolder(_ id: ItemID) {
        guard let r = t.remote[id], r.kind == .folder else { return }
        if t.local[id] == nil {
            if let other = liveLocal(at: r.path) {
                // A new local folder at the same path adopts the server's ID.
                guard t.local[other]!.kind == .folder, t.synced[other] == nil else { return }
                t.local[id] = t.local[other]
                t.local[other] = nil
            } else {
                ensureLocalParents(of: r.path)
                t.local[id] = LocalNode(path: r.path, kind: .folder, hash: nil)
            }
        }
        t.synced[id] = SyncedNode(path: t.local[id]!.path == r.path ? r.path : (t.synced[id]?.path ?? r.path), kind: .folder, version: nil, hash: nil)
    }

    mutating func moveLocal(_ id: ItemID, to: RelativePath) {
        guard let l = t.local[id], liveLocal(at: to, except: id) == nil, !(l.kind == .folder && to.isSelfOrDescendant(of: l.path) && to != l.path) else { return }
        let old = l.path
        ensureLocalParents(of: to)
        for (k, v) in t.local where v.path.isSelfOrDescendant(of: old) { t.local[k]!.path = v.path.rebased(from: old, to: to) }
        for (k, v) in t.synced where v.path.isSelfOrDescendant(of: old) && t.local[k] != nil { t.synced[k]!.path = v.path.rebased(from: old, to: to) }
    }

    mutating func deleteLocal(_ id: ItemID) {
        guard let l = t.local[id] else { return }
        if l.kind == .folder {
            guard !t.local.contains(where: { $0.key != id && $0.value.path.isSelfOrDescendant(of: l.path) }) else { return }  // rmdir of a non-empty folder fails
        } else {
            guard localIsSafeToReplace(id) else { return }
        }
        t.local[id] = nil
        t.synced[id] = nil
    }

    mutating func markSynced(_ id: ItemID) {
        guard let l = t.local[id], let r = t.remote[id], l.kind == r.kind, l.kind == .folder || l.hash == r.hash else { return }
        let path = l.path == r.path ? l.path : (t.synced[id]?.path ?? r.path)
        t.synced[id] = SyncedNode(path: path, kind: l.kind, version: r.version, hash: r.hash)
    }
}
