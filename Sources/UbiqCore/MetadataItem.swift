import Foundation

/// One item as a metadata query returns it: the attributes of product §5, named as in
/// `ubiq ls --json`.
public struct MetadataItem: Sendable, Equatable, Hashable, Codable {
    /// Whether the device holds the item's content.
    public enum Status: String, Sendable, Codable, CaseIterable {
        /// Listed only: the content is not on this device.
        case notDownloaded
        /// The local content is an older version.
        case downloaded
        /// The local content is the current version.
        case current
    }

    public var itemID: ItemID
    public var path: RelativePath
    public var name: String
    public var kind: ItemKind
    public var size: Int
    public var created: Date?
    public var modified: Date?
    public var status: Status
    public var downloading: Bool
    public var percentDownloaded: Double
    public var uploading: Bool
    public var uploaded: Bool
    public var percentUploaded: Double
    public var conflict: Bool
    public var excluded: Bool
    public var downloadError: String?
    public var uploadError: String?
    /// Kept on this device ("keep downloaded"): itself, or a folder it is in, is pinned.
    public var pinned: Bool
    /// Its transfers wait until resumed (`P` on marked items, `ubiq pause PATH`).
    public var paused: Bool

    public init(itemID: ItemID, path: RelativePath, kind: ItemKind, size: Int, created: Date? = nil, modified: Date?, status: Status,
                downloading: Bool = false, percentDownloaded: Double = 0, uploading: Bool = false, uploaded: Bool = true,
                percentUploaded: Double = 100, conflict: Bool = false, excluded: Bool = false, downloadError: String? = nil, uploadError: String? = nil, pinned: Bool = false,
                paused: Bool = false) {
        self.itemID = itemID; self.path = path; self.name = path.name; self.kind = kind; self.size = size; self.created = created
        self.modified = modified; self.status = status; self.downloading = downloading; self.percentDownloaded = percentDownloaded
        self.uploading = uploading; self.uploaded = uploaded; self.percentUploaded = percentUploaded; self.conflict = conflict
        self.excluded = excluded; self.downloadError = downloadError; self.uploadError = uploadError; self.pinned = pinned
        self.paused = paused
    }

    enum CodingKeys: String, CodingKey {
        case itemID, path, name, kind, size, created, modified, status, downloading, percentDownloaded, uploading, uploaded, percentUploaded,
             conflict, excluded, downloadError, uploadError, pinned, paused
    }

    /// Reads what `encode(to:)` writes; `pinned` and `paused` may be missing (written by an older daemon).
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(itemID: try c.decode(ItemID.self, forKey: .itemID), path: try c.decode(RelativePath.self, forKey: .path),
                  kind: try c.decode(ItemKind.self, forKey: .kind), size: try c.decode(Int.self, forKey: .size),
                  created: try c.decodeIfPresent(Date.self, forKey: .created), modified: try c.decodeIfPresent(Date.self, forKey: .modified),
                  status: try c.decode(Status.self, forKey: .status), downloading: try c.decode(Bool.self, forKey: .downloading),
                  percentDownloaded: try c.decode(Double.self, forKey: .percentDownloaded), uploading: try c.decode(Bool.self, forKey: .uploading),
                  uploaded: try c.decode(Bool.self, forKey: .uploaded), percentUploaded: try c.decode(Double.self, forKey: .percentUploaded),
                  conflict: try c.decode(Bool.self, forKey: .conflict), excluded: try c.decode(Bool.self, forKey: .excluded),
                  downloadError: try c.decodeIfPresent(String.self, forKey: .downloadError), uploadError: try c.decodeIfPresent(String.self, forKey: .uploadError),
                  pinned: try c.decodeIfPresent(Bool.self, forKey: .pinned) ?? false, paused: try c.decodeIfPresent(Bool.self, forKey: .paused) ?? false)
        self.name = try c.decodeIfPresent(String.self, forKey: .name) ?? path.name
    }

    // Optional attributes are written as null (the contract names them), not left out.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(itemID, forKey: .itemID); try c.encode(path, forKey: .path); try c.encode(name, forKey: .name)
        try c.encode(kind, forKey: .kind); try c.encode(size, forKey: .size); try c.encode(created, forKey: .created)
        try c.encode(modified, forKey: .modified); try c.encode(status, forKey: .status); try c.encode(downloading, forKey: .downloading)
        try c.encode(percentDownloaded, forKey: .percentDownloaded); try c.encode(uploading, forKey: .uploading)
        try c.encode(uploaded, forKey: .uploaded); try c.encode(percentUploaded, forKey: .percentUploaded)
        try c.encode(conflict, forKey: .conflict); try c.encode(excluded, forKey: .excluded)
        try c.encode(downloadError, forKey: .downloadError); try c.encode(uploadError, forKey: .uploadError)
        try c.encode(pinned, forKey: .pinned)
        try c.encode(paused, forKey: .paused)
    }
}
