import Foundation
import UbiqCore

/// One item as the engine knows it, with live transfer state (the attributes of product §5).
public struct ListedItem: Sendable, Equatable, Codable {
    public enum Status: String, Sendable, Codable { case notDownloaded, downloaded, current }
    public var itemID: ItemID
    public var path: RelativePath
    public var kind: ItemKind
    public var size: Int
    public var modified: Date?
    public var status: Status
    public var downloading: Bool
    public var percentDownloaded: Double
    public var uploading: Bool
    public var uploaded: Bool
    public var percentUploaded: Double
    public var conflict: Bool
    public var uploadError: String?
    public var downloadError: String?
}

extension SyncEngine {
    /// Every item (server's and local-only ones), from local state only: no network round trip.
    public func listing() -> [ListedItem] {
        var out: [ListedItem] = []
        var seen = Set<ItemID>()
        for (id, r) in remote {
            seen.insert(id)
            let s = synced[id]
            let status: ListedItem.Status
            if r.node.kind == .folder { status = local[id] != nil ? .current : .notDownloaded } else if local[id] == nil {
                status = .notDownloaded
            } else {
                status = s?.node.version == r.node.version ? .current : .downloaded
            }
            let t = transfers[id]
            let up = t?.direction == .up, down = t?.direction == .down
            let pct = t.map { $0.bytesTotal > 0 ? Double($0.bytesDone) * 100 / Double($0.bytesTotal) : 0 } ?? 0
            let localChanged = local[id] != nil && localHashes[id] != nil && localHashes[id] != s?.node.hash
            out.append(ListedItem(itemID: id, path: local[id]?.path ?? r.node.path, kind: r.node.kind, size: r.node.size, modified: r.modified,
                                  status: status, downloading: down, percentDownloaded: down ? pct : (status == .current ? 100 : 0),
                                  uploading: up, uploaded: r.node.uploaded && !localChanged, percentUploaded: up ? pct : (r.node.uploaded ? 100 : 0),
                                  conflict: r.conflictCount > 0, uploadError: up || localChanged ? itemErrors[id] : nil,
                                  downloadError: down ? itemErrors[id] : nil))
        }
        for (id, l) in local where !seen.contains(id) {
            let t = transfers[id]
            let pct = t.map { $0.bytesTotal > 0 ? Double($0.bytesDone) * 100 / Double($0.bytesTotal) : 0 } ?? 0
            out.append(ListedItem(itemID: id, path: l.path, kind: l.entry.kind, size: Int(l.entry.stamp.size),
                                  modified: Self.date(nanos: l.entry.stamp.mtimeNanos), status: .current, downloading: false,
                                  percentDownloaded: 100, uploading: t != nil, uploaded: false, percentUploaded: pct, conflict: false,
                                  uploadError: itemErrors[id], downloadError: nil))
        }
        return out.sorted { $0.path < $1.path }
    }
}
