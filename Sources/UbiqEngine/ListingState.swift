import Crypto
import Foundation
import UbiqCore

/// A copy of the engine's trees (copy-on-write: taking it costs nothing) from which item
/// attributes are computed without holding the engine's control queue.
public struct ListingState: Sendable {
    let remote: [ItemID: RemoteEntry]
    let local: [ItemID: (path: RelativePath, entry: LocalEntry)]
    let synced: [ItemID: SyncedEntry]
    let localHashes: [ItemID: ContentHash]
    let transfers: [ItemID: Transfer]
    let itemErrors: [ItemID: String]
    let excluded: [RelativePath: LocalEntry]
    /// Items kept on this device, and the paths of pinned folders (what is in them is kept too).
    var pinned: Set<ItemID> = []
    var pinnedFolders: [RelativePath] = []
    /// Items whose transfers wait until resumed (`SyncEngine.hold`).
    var held: Set<ItemID> = []

    /// Pinned itself, or inside a pinned folder.
    func isPinned(_ id: ItemID, _ path: RelativePath) -> Bool {
        (!pinned.isEmpty && pinned.contains(id)) || (!pinnedFolders.isEmpty && pinnedFolders.contains { path.isSelfOrDescendant(of: $0) })
    }

    /// Every item (the server's, local-only and excluded ones) with the attributes of product §5.
    public func all() -> [MetadataItem] { all(where: { _ in true }, reserving: true) }

    /// The items `include` takes (a query's scope and predicate: what it leaves is never kept,
    /// nor room made for it unless `reserving`: at 1,000,000 items that room is ~170 MB).
    func all(where include: @Sendable (MetadataItem) -> Bool, reserving: Bool = false) -> [MetadataItem] {
        var out: [MetadataItem] = []
        if reserving { out.reserveCapacity(remote.count + 16) }
        // Each item costs a few look-ups in large tables (cache misses, mostly): past a few
        // thousand items the server's items are listed in slices on every core.
        let slices = remote.count < 8_192 ? 1 : max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))
        if slices == 1 {
            for (id, r) in remote { let m = listed(id, r); if include(m) { out.append(m) } }
        } else {
            var bounds = [remote.startIndex]
            for k in 1..<slices { bounds.append(remote.index(bounds[k - 1], offsetBy: remote.count / slices)) }
            bounds.append(remote.endIndex)
            let cuts = bounds
            let parts = SliceResults<MetadataItem>(slices)
            DispatchQueue.concurrentPerform(iterations: slices) { k in
                parts.set(k, remote[cuts[k]..<cuts[k + 1]].lazy.map { listed($0.key, $0.value) }.filter(include))
            }
            for part in parts.all { out.append(contentsOf: part) }
        }
        for (id, l) in local where remote[id] == nil {
            let m = localOnly(id, l.path, l.entry)
            if include(m) { out.append(m) }
        }
        for (p, e) in excluded {
            let m = Self.excludedItem(p, e)
            if include(m) { out.append(m) }
        }
        return out
    }

    /// One item, or nil when the engine does not know it.
    public func item(_ id: ItemID) -> MetadataItem? {
        if let r = remote[id] { return listed(id, r) }
        if let l = local[id] { return localOnly(id, l.path, l.entry) }
        return nil
    }

    static func excludedItem(_ p: RelativePath, _ e: LocalEntry) -> MetadataItem {
        var m = MetadataItem(itemID: Self.excludedID(p), path: p, kind: e.kind, size: e.kind == .file ? Int(e.stamp.size) : 0,
                             modified: SyncEngine.date(nanos: e.stamp.mtimeNanos), status: .current, uploaded: false, percentUploaded: 0)
        m.excluded = true
        return m
    }

    func percent(_ t: Transfer?) -> Double {
        guard let t else { return 0 }
        return t.bytesTotal > 0 ? min(100, Double(t.bytesDone) * 100 / Double(t.bytesTotal)) : 0
    }

    func listed(_ id: ItemID, _ r: RemoteEntry) -> MetadataItem {
        // Each look-up once, and none in what is usually empty (a gathering lists every item).
        let s = synced[id], l = local[id]
        let h = l == nil ? nil : localHashes[id]
        let status: MetadataItem.Status
        if l == nil {
            status = .notDownloaded
        } else if r.node.kind == .folder {
            status = .current
        } else {
            status = s?.node.version == r.node.version || (h != nil && h == r.node.hash) ? .current : .downloaded
        }
        let t = transfers.isEmpty ? nil : transfers[id]
        let up = t?.direction == .up, down = t?.direction == .down
        let localChanged = l != nil && r.node.kind == .file && h != nil && h != s?.node.hash && h != r.node.hash
        let uploaded = r.node.uploaded && !localChanged
        let err = itemErrors.isEmpty ? nil : itemErrors[id]
        return MetadataItem(itemID: id, path: l?.path ?? r.node.path, kind: r.node.kind, size: l.map { Int($0.entry.stamp.size) } ?? r.node.size,
                            created: r.created, modified: r.modified, status: status, downloading: down,
                            percentDownloaded: down ? percent(t) : (status == .notDownloaded ? 0 : 100), uploading: up, uploaded: uploaded,
                            percentUploaded: up ? percent(t) : (uploaded ? 100 : 0), conflict: r.conflictCount > 0, excluded: false,
                            downloadError: down || status == .notDownloaded ? err : nil, uploadError: up || localChanged ? err : nil,
                            pinned: isPinned(id, l?.path ?? r.node.path), paused: !held.isEmpty && held.contains(id))
    }

    func localOnly(_ id: ItemID, _ path: RelativePath, _ e: LocalEntry) -> MetadataItem {
        let t = transfers[id]
        return MetadataItem(itemID: id, path: path, kind: e.kind, size: e.kind == .file ? Int(e.stamp.size) : 0,
                            modified: SyncEngine.date(nanos: e.stamp.mtimeNanos), status: .current, uploading: t != nil, uploaded: false,
                            percentUploaded: percent(t), uploadError: itemErrors[id], pinned: isPinned(id, path), paused: held.contains(id))
    }

    /// The attributes of each of `ids` (nil: gone), excluded items included.
    func items(_ ids: some Sequence<ItemID>) -> [(ItemID, MetadataItem?)] {
        let byID = Dictionary(excluded.map { (Self.excludedID($0.key), $0) }, uniquingKeysWith: { a, _ in a })
        return ids.map { id in
            if let (p, e) = byID[id] { return (id, Self.excludedItem(p, e)) }
            return (id, item(id))
        }
    }

    /// A stable ID for an excluded item (it never gets a server ID): derived from its path.
    static func excludedID(_ p: RelativePath) -> ItemID {
        var bytes = Array(SHA256.hash(data: Data(("nosync:" + p.string).utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let u = bytes.withUnsafeBytes { $0.load(as: uuid_t.self) }
        return ItemID(uuid: UUID(uuid: u))
    }
}

/// What each slice of a concurrent listing made, kept until all are done.
final class SliceResults<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var parts: [[T]]
    init(_ n: Int) { parts = Array(repeating: [], count: n) }
    func set(_ k: Int, _ part: [T]) { lock.withLock { parts[k] = part } }
    var all: [[T]] { lock.withLock { parts } }
}
