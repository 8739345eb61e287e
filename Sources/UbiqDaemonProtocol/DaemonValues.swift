import Foundation
import UbiqCore
import UbiqProtocol

/// A three-way merge of a text conflict, prepared for a person to look at before it is kept
/// (`ubiq resolve PATH --merge`, `m` in the front end).
public struct MergeDraft: Sendable, Equatable, Codable {
    /// The document.
    public var path: RelativePath
    public var item: ItemID
    /// The current version ("ours" in the markers) and the conflict version merged into it.
    public var current: VersionRecord
    public var conflict: VersionRecord
    /// The common base (nil: none — the two versions began apart, e.g. the same path created on
    /// two devices; everything either added is then compared line by line).
    public var base: VersionID?
    /// The merged text, with conflicting hunks between markers.
    public var text: String
    /// How many hunks both sides changed differently.
    public var conflicts: Int

    public init(path: RelativePath, item: ItemID, current: VersionRecord, conflict: VersionRecord, base: VersionID?, text: String, conflicts: Int) {
        self.path = path; self.item = item; self.current = current; self.conflict = conflict
        self.base = base; self.text = text; self.conflicts = conflicts
    }
}

/// One container a device syncs, as `ubiq containers` lists it.
public struct ContainerState: Codable, Sendable, Equatable {
    public var id: String
    public var folder: String
    /// The one commands act on when none is named.
    public var isDefault: Bool
    /// The engine's state (`online`, `offline`, …; `stopped` when no engine runs for it).
    public var state: String
    /// Nothing left to upload, download or apply.
    public var idle: Bool
    public init(id: String, folder: String, isDefault: Bool, state: String, idle: Bool) {
        self.id = id; self.folder = folder; self.isDefault = isDefault; self.state = state; self.idle = idle
    }
}

/// Why keys changed (as `NSUbiquitousKeyValueStoreChangeReasonKey`).
public enum SettingsChangeReason: String, Codable, Sendable {
    case serverChange, initialSyncChange, quotaViolationChange, accountChange
    /// Written on this device by another program (the front end hears `ubiq kv set`): only
    /// for listeners that ask for it.
    case localChange
}

/// One external change of the settings: its reason and the keys it touched.
public struct SettingsChange: Codable, Sendable, Equatable {
    public var reason: SettingsChangeReason
    public var keys: [String]
    public init(reason: SettingsChangeReason, keys: [String]) { self.reason = reason; self.keys = keys }
}
