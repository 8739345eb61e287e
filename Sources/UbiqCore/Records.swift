import Foundation

/// One version of an item as the server records it.
public struct VersionRecord: Hashable, Sendable, Codable {
    public var id: VersionID
    public var state: VersionState
    public var size: Int
    public var hash: ContentHash
    /// The file's modification date as the writing device saw it.
    public var modified: Date
    /// When the server accepted the commit.
    public var committed: Date
    public var device: DeviceID
    public var deviceName: String
    /// True once the server holds every chunk of the content (metadata is committed first).
    public var uploaded: Bool
    /// The file's permission bits on the device that wrote it (nil: not sent; devices then use
    /// their default).
    public var permissions: Int?
    /// The version this one was committed against — what its device last had (nil: a new
    /// item's first version, or not recorded). Version lists carry it; a three-way merge of a
    /// conflict takes the conflict version's base as the common ancestor.
    public var base: VersionID?
    /// An end-to-end encrypted account's record of the version, sealed by the device that
    /// committed it (`RecordCipher`: its times, permissions and content hash, bound to the item
    /// and the version); the server keeps it and hands it back unread. Nil for a plain account.
    public var sealed: String?
    /// The version's generation in its item's history, from its sealed record as the device
    /// opened it (`RecordCipher.Fields.generation`); never on the wire. Nil for a plain
    /// account's version and a record sealed before generations.
    public var generation: UInt32? = nil

    enum CodingKeys: String, CodingKey {
        case id, state, size, hash, modified, committed, device, deviceName, uploaded, permissions, base, sealed
    }

    public init(id: VersionID, state: VersionState, size: Int, hash: ContentHash, modified: Date, committed: Date,
                device: DeviceID, deviceName: String, uploaded: Bool, permissions: Int? = nil, base: VersionID? = nil, sealed: String? = nil) {
        self.permissions = permissions
        self.sealed = sealed
        self.base = base
        self.id = id
        self.state = state
        self.size = size
        self.hash = hash
        self.modified = modified
        self.committed = committed
        self.device = device
        self.deviceName = deviceName
        self.uploaded = uploaded
    }
}

/// An item (file or folder) as the server records it.
public struct ItemRecord: Hashable, Sendable, Codable {
    public var id: ItemID
    public var path: RelativePath
    public var kind: ItemKind
    /// The current version (files only).
    public var current: VersionRecord?
    /// Number of unresolved conflict versions.
    public var conflictCount: Int
    /// Set while the item is in the trash.
    public var deletedAt: Date?
    /// The change-journal position of the item's latest change.
    public var changeSeq: Int64
    /// When the item's first version was committed (nil for folders).
    public var created: Date?

    public init(id: ItemID, path: RelativePath, kind: ItemKind, current: VersionRecord?, conflictCount: Int, deletedAt: Date?, changeSeq: Int64,
                created: Date? = nil) {
        self.created = created
        self.id = id
        self.path = path
        self.kind = kind
        self.current = current
        self.conflictCount = conflictCount
        self.deletedAt = deletedAt
        self.changeSeq = changeSeq
    }

    public var isDeleted: Bool { deletedAt != nil }
}
