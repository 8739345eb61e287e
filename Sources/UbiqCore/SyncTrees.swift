/// What the server last said about an item (the Remote tree).
public struct RemoteNode: Hashable, Sendable {
    public var path: RelativePath
    public var kind: ItemKind
    /// The current version (files).
    public var version: VersionID?
    public var hash: ContentHash?
    public var size: Int
    /// True once the server holds all of the current version's content.
    public var uploaded: Bool

    public init(path: RelativePath, kind: ItemKind, version: VersionID?, hash: ContentHash?, size: Int = 0, uploaded: Bool = true) {
        self.path = path; self.kind = kind; self.version = version; self.hash = hash; self.size = size; self.uploaded = uploaded
    }
}

/// What the folder last looked like (the Local tree). `hash` is nil while a file is not yet
/// hashed or still being written; the planner leaves such content alone.
public struct LocalNode: Hashable, Sendable {
    public var path: RelativePath
    public var kind: ItemKind
    public var hash: ContentHash?

    public init(path: RelativePath, kind: ItemKind, hash: ContentHash?) {
        self.path = path; self.kind = kind; self.hash = hash
    }
}

/// The last state both sides agreed on (the Synced tree, each item's merge base).
public struct SyncedNode: Hashable, Sendable {
    public var path: RelativePath
    public var kind: ItemKind
    public var version: VersionID?
    public var hash: ContentHash?
    /// Set when this device's local content was stored by the server as a conflict version:
    /// the content is safe there, so the file may take the current version again.
    public var conflictHash: ContentHash?

    public init(path: RelativePath, kind: ItemKind, version: VersionID?, hash: ContentHash?, conflictHash: ContentHash? = nil) {
        self.path = path; self.kind = kind; self.version = version; self.hash = hash; self.conflictHash = conflictHash
    }
}

/// The three trees, keyed by item ID (never by path).
public struct SyncTrees: Sendable, Equatable {
    public var remote: [ItemID: RemoteNode]
    public var local: [ItemID: LocalNode]
    public var synced: [ItemID: SyncedNode]

    public init(remote: [ItemID: RemoteNode] = [:], local: [ItemID: LocalNode] = [:], synced: [ItemID: SyncedNode] = [:]) {
        self.remote = remote; self.local = local; self.synced = synced
    }
}

/// One step the engine takes to bring the trees together. Order inside a batch does not matter
/// for correctness; the engine runs creations parents-first and deletions children-first.
public enum SyncOp: Hashable, Sendable {
    /// Commit the local content (a new item when `base` is nil) and upload what the server lacks.
    case upload(ItemID, base: VersionID?)
    /// Create (or revive) a folder on the server.
    case createRemoteFolder(ItemID)
    case moveRemote(ItemID, to: RelativePath)
    case deleteRemote(ItemID)
    /// Fetch a version's content into the item's local file (creating or replacing it).
    case download(ItemID, version: VersionID)
    case createLocalFolder(ItemID)
    case moveLocal(ItemID, to: RelativePath)
    /// Remove the local file, or the folder once it is empty.
    case deleteLocal(ItemID)
    /// Local and remote agree already: record the merge base.
    case markSynced(ItemID)
    /// Gone on both sides: drop the merge base.
    case forget(ItemID)

    /// True for `moveRemote`.
    public var isRemoteMove: Bool { if case .moveRemote = self { true } else { false } }

    public var item: ItemID {
        switch self {
        case .upload(let i, _), .createRemoteFolder(let i), .moveRemote(let i, _), .deleteRemote(let i), .download(let i, _),
             .createLocalFolder(let i), .moveLocal(let i, _), .deleteLocal(let i), .markSynced(let i), .forget(let i):
            i
        }
    }
}
