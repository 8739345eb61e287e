import Foundation
import UbiqCore
import UbiqProtocol

/// A change made in the Files view that `z` can take back.
public enum FilesUndo: Equatable, Sendable {
    /// Deleted on every device (in the server's trash): `z` restores it.
    case deleted(RelativePath)
    /// Renamed: `z` gives it its old name again.
    case renamed(from: RelativePath, to: RelativePath)
    /// Changes remembered.
    public static let depth = 50
}

/// Side effects the controller asks for; the app runs them off the main queue and feeds the
/// results back as events.
public enum Effect: Equatable, Sendable {
    case download(RelativePath)
    case evict(RelativePath)
    /// Cancel the downloads of the items.
    case cancelTransfers([RelativePath])
    /// Keep on this device (or stop keeping).
    case pin([RelativePath], Bool)
    /// Try failing items again now (a folder: everything in it).
    case retry([RelativePath])
    /// Pause syncing (`true`) or resume it.
    case pause(Bool)
    /// Hold (or let go) the transfers of these items only.
    case hold([RelativePath], Bool)
    case delete(RelativePath)
    case loadVersions(RelativePath)
    case loadPreview(RelativePath, VersionRecord, current: VersionRecord?)
    case resolve(RelativePath, VersionID, label: String)
    case keepBoth(RelativePath)
    /// Apply a staged decision of the Conflicts view; forget the staged decisions.
    case decide(RelativePath, ConflictChoice)
    case clearChoices
    /// Merge a text conflict (this conflict version; nil: the only one) in `$VISUAL`/`$EDITOR`.
    case merge(RelativePath, conflict: VersionID?)
    case rename(RelativePath, to: String)
    case makeFolder(RelativePath)
    /// Hand the terminal to `$VISUAL`/`$EDITOR` on the file (fetched first if only in the
    /// cloud); open it with `xdg-open`.
    case edit(RelativePath, absolute: String, fetch: Bool)
    case open(absolute: String)
    /// Fetch one version whole into a private file and open it with `xdg-open` (`o` in Versions).
    case openVersion(RelativePath, VersionRecord)
    /// Put text on the clipboard (OSC 52: the terminal, or tmux, keeps it).
    case copy(String)
    /// Stop like any program on Ctrl-Z; `fg` brings it back.
    case suspend
    case setValue(key: String, value: KVValue?)
    /// One atomic write: `value` under `to`, `from` removed.
    case renameKey(from: String, to: String, value: KVValue)
    /// Renames an item without remembering it for `z` (the undo of a rename).
    case renameBack(RelativePath, to: String)
    /// Puts keys back as they were before a write (`z` in Settings).
    case undoSettings([String: KVValue?], what: String)
    /// The whole store as TOML in the editor (`E` in Settings).
    case editStore
    /// A settings key's last writes (`i` in Settings).
    case loadKeyHistory(String)
    case loadTrash
    /// Switch to a theme (`:theme NAME`), or read the theme and config.toml again (`Ctrl-R`).
    case setTheme(String)
    /// Show the device's containers (`:container`); switch to one (`:container ID`).
    case listContainers
    case switchContainer(ContainerID)
    case reloadLook
    case restore(RelativePath)
    case emptyTrash
    /// Let in the new device of an encrypted account that shows this code (`:approve CODE`).
    case approveDevice(String)
    case syncNow
    case quit
}
