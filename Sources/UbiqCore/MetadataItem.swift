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

    public init(itemID: ItemID, path: RelativePath, kind: ItemKind, size: Int, created: Date? = nil, modified: Date?, status: Status,
                downloading: Bool = false, percentDownloaded: Double = 0, uploading: Bool = false, uploaded: Bool = true,
                percentUploaded: Double = 100, conflict: Bool = false, excluded: Bool = false, downloadError: String? = nil, uploadError: String? = nil) {
        self.itemID = itemID; self.path = path; self.name = path.name; self.kind = kind; self.size = size; self.created = created
        self.modified = modified; self.status = status; self.downloading = downloading; self.percentDownloaded = percentDownloaded
        self.uploading = uploading; self.uploaded = uploaded; self.percentUploaded = percentUploaded; self.conflict = conflict
        self.excluded = excluded; self.downloadError = downloadError; self.uploadError = uploadError
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
    }
}
