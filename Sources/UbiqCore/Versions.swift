import Foundation

/// Where a version stands for its item.
public enum VersionState: String, Codable, Sendable {
    /// The item's content now.
    case current
    /// An unresolved conflict version, kept beside the current one.
    case conflict
    /// History: a former current version or a resolved conflict.
    case other
}

/// Whether an item is a file or a folder.
public enum ItemKind: String, Codable, Sendable {
    case file
    case folder
}

/// What the server knows about an item when a commit arrives (input of the conflict rule).
public struct ItemSnapshot: Sendable, Equatable {
    public var currentVersion: VersionID?
    public var currentHash: ContentHash?
    public var conflictHashes: [VersionID: ContentHash]
    public var isDeleted: Bool
    /// The device that wrote the current version, while that version's content is still being
    /// uploaded (nil once complete).
    public var currentUnfinishedBy: DeviceID?

    public init(currentVersion: VersionID?, currentHash: ContentHash?, conflictHashes: [VersionID: ContentHash] = [:], isDeleted: Bool = false,
                currentUnfinishedBy: DeviceID? = nil) {
        self.currentVersion = currentVersion
        self.currentHash = currentHash
        self.conflictHashes = conflictHashes
        self.isDeleted = isDeleted
        self.currentUnfinishedBy = currentUnfinishedBy
    }
}

/// The server's decision for an incoming commit (product §3).
public enum CommitDecision: Equatable, Sendable {
    /// A new item.
    case create
    /// The base was current: the incoming version becomes current, the old one history.
    case advance
    /// The item was deleted meanwhile: the edit wins and the item comes back.
    case revive
    /// The base is stale: keep the current version, store the incoming one as a conflict.
    case conflict
    /// The content is already there (identical to current, or to an existing conflict version):
    /// nothing to store, no conflict.
    case unchanged(VersionID)
}

/// The conflict rule, decided by the server so that two devices can never both win.
public enum ConflictRule {
    /// - Parameters:
    ///   - existing: the item as stored, nil for an item the server does not know.
    ///   - base: the version the device's content was based on (nil for a new file).
    ///   - incoming: the content hash being committed.
    ///   - device: the committing device. A device whose own current version never finished
    ///     uploading (its file changed or went away meanwhile) supersedes it: that version was
    ///     an earlier state of the same device's file, which no other device could have seen
    ///     complete; keeping it current would leave every device waiting for content that
    ///     never comes.
    public static func decide(existing: ItemSnapshot?, base: VersionID?, incoming: ContentHash, device: DeviceID? = nil) -> CommitDecision {
        guard let existing else { return .create }
        if existing.isDeleted { return .revive }
        if let cur = existing.currentVersion, existing.currentHash == incoming { return .unchanged(cur) }
        if existing.currentVersion == nil || base == existing.currentVersion { return .advance }
        if let device, existing.currentUnfinishedBy == device { return .advance }
        if let same = existing.conflictHashes.first(where: { $0.value == incoming }) { return .unchanged(same.key) }
        return .conflict
    }
}

/// How long a deleted item stays in the trash, restorable (product §2.8: at least 30 days);
/// then it is purged and the space only it used is given back to the account.
public enum TrashPolicy {
    public static let keepAge: TimeInterval = 30 * 24 * 3600
}

/// Which history versions to keep (product §3.3: at least the last 20, or 30 days).
public enum HistoryPolicy {
    public static let keepCount = 20
    public static let keepAge: TimeInterval = 30 * 24 * 3600

    /// Returns the IDs of `history` that may be pruned at `now` (of versions committed at the
    /// same moment, those given first are kept: stores give the newest first): older than
    /// 30 days *and* beyond the newest 20.
    public static func prunable(_ history: [(id: VersionID, committed: Date)], now: Date) -> [VersionID] {
        let sorted = history.sorted { $0.committed > $1.committed }
        return sorted.dropFirst(keepCount).filter { now.timeIntervalSince($0.committed) > keepAge }.map(\.id)
    }
}

/// How the server took a commit.
public enum CommitOutcome: String, Codable, Sendable {
    case created, updated, revived, conflict, unchanged
}
