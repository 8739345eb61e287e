import Foundation
import UbiqCore
import UbiqEngine
import UbiqProtocol

/// The three views reachable with `1` `2` `3`.
public enum ViewID: Int, Sendable, CaseIterable {
    case files = 1, conflicts, settings, trash
    public var title: String { ["", "Files", "Conflicts", "Settings", "Trash"][rawValue] }
}

/// A text line being typed: the filter, or a key-value add/edit step.
public struct Prompt: Equatable, Sendable {
    public enum Purpose: Equatable, Sendable {
        case filter
        case newKey
        case newType(key: String)
        case value(key: String, type: String, isNew: Bool)
        /// Emptying the trash: the word `empty` must be typed.
        case emptyTrash
        /// The `:` command line.
        case command
        /// A new name for the item at the path; a new folder's name in a folder (nil: the top).
        case rename(RelativePath)
        case newFolder(RelativePath?)
        /// Words the help overlay keeps lines of (`/` in the help).
        case helpFilter
        /// Words the Settings view's keys must contain (`/` in Settings).
        case settingsFilter
        /// Text to find in a version's content (`/` with the content focused).
        case contentSearch
        /// A new name for a key (`r` in Settings).
        case renameKey(from: String)
    }
    public var purpose: Purpose
    public var label: String
    public var text: String
    public var error: String?
    /// The column (1-based, in characters) the error points at: marked in the line.
    public var errorColumn: Int?
    /// Shown when the key being edited changed on another device meanwhile (the draft is kept).
    public var notice: String?
    /// The caret, in characters from the end (0: at the end, where typing and pasting append).
    public var back = 0
    public init(purpose: Purpose, label: String, text: String, error: String? = nil, notice: String? = nil) {
        self.purpose = purpose; self.label = label; self.text = text; self.error = error; self.notice = notice
    }

    /// The caret, in characters from the start.
    public var caret: Int { text.count - back }

    /// Readline keys: ←/→, Home/End and Ctrl-A/E move; Backspace/Delete, Ctrl-U (to the start)
    /// and Ctrl-W (the word before the caret) delete. False for other keys.
    public mutating func edit(_ key: Key) -> Bool {
        let n = text.count
        switch key {
        case .left: back = min(n, back + 1)
        case .right: back = max(0, back - 1)
        case .home, .ctrlA: back = n
        case .end, .ctrlE: back = 0
        case .backspace:
            guard back < n else { return true }
            if back == 0 { text.removeLast() } else { text.remove(at: text.index(text.endIndex, offsetBy: -back - 1)) }
        case .delete:
            guard back > 0 else { return true }
            text.remove(at: text.index(text.endIndex, offsetBy: -back))
            back -= 1
        case .ctrlU:
            text.removeSubrange(..<text.index(text.endIndex, offsetBy: -back))
        case .ctrlW:
            let end = text.index(text.endIndex, offsetBy: -back)
            var start = end
            while start > text.startIndex, text[text.index(before: start)] == " " { start = text.index(before: start) }
            while start > text.startIndex, text[text.index(before: start)] != " " { start = text.index(before: start) }
            text.removeSubrange(start..<end)
        default: return false
        }
        error = nil
        errorColumn = nil
        return true
    }

    /// Types `c` at the caret.
    mutating func insert(_ c: Character) {
        if back == 0 { text.append(c) } else { text.insert(c, at: text.index(text.endIndex, offsetBy: -back)) }
        error = nil
        errorColumn = nil
    }

    /// The most bytes (UTF-8) the line takes: a setting's value may be as big as a setting
    /// (1 MiB with its key), anything else a line of 4 KiB. It was cut at 4,096 characters
    /// without a word, and a longer pasted value was saved cut.
    public var limit: Int {
        if case .value(let key, _, _) = purpose { return KVLimits.maxEntryBytes - key.utf8.count }
        return 4096
    }
}

/// A yes/no question; `y` runs the effect, anything else cancels (default No).
public struct Confirmation: Equatable, Sendable {
    public var message: String
    /// What `y` does (several for the marked items).
    public var effects: [Effect]
    public init(message: String, effect: Effect) { self.message = message; self.effects = [effect] }
    public init(message: String, effects: [Effect]) { self.message = message; self.effects = effects }
}

/// A short message in the status line. It goes after a while (`lifetime`, counted from the
/// first tick that sees it), so a message never outlives what it was about by minutes.
public struct Flash: Equatable, Sendable {
    public enum Level: String, Sendable { case info, warn, error }
    public var text: String
    public var level: Level
    /// When a tick first saw it (set by `expireTimed`).
    public var seen: Date? = nil
    /// Stays until the next key press, and narration does not replace it (a theme that could
    /// not be used: read before anything else is said).
    public var sticky = false

    /// How long a message of this level stays: errors longest, so they can be read.
    public var lifetime: TimeInterval {
        if sticky { return .infinity }
        return switch level {
        case .info: 5
        case .warn: 10
        case .error: 20
        }
    }
}

/// One version of the item in the Versions view.
public struct VersionRow: Equatable, Sendable {
    public enum Kind: String, Sendable { case current, conflict, history }
    public var kind: Kind
    public var record: VersionRecord
}

/// The Versions view: one item's versions, the selected one's preview and its diff with the current.
public struct VersionsState: Equatable, Sendable {
    public var path: RelativePath
    public var rows: [VersionRow] = []
    public var cursor = ListCursor()
    public var loading = true
    public var showDiff = false
    /// Preview lines of the selected version (text, or a hex dump for binary content).
    public var preview: [String]?
    public var previewIsText = true
    /// Text of the current version (for the diff).
    public var currentText: [String]?
    public var previewFor: VersionID?
    public var error: String?
    /// Where keys go: the list of versions, or the content (`Tab`).
    public var contentFocused = false
    /// `+`: the content takes the whole view (the list of versions hidden).
    public var maximized = false
    /// The first content line shown (the panes scroll together).
    public var scroll = 0
    /// `/` in the content: the text `n` / `N` look for (any case), and the line of the match
    /// shown (the content scrolls to a few lines above it).
    public var search = ""
    public var found: Int?
    public init(path: RelativePath) { self.path = path }
    public var selected: VersionRow? { rows.indices.contains(cursor.index) ? rows[cursor.index] : nil }

    /// The diff is shown (asked for, and there is text on both sides to compare).
    public var showsDiff: Bool { showDiff && previewIsText && currentText != nil && selected?.kind != .current }
    /// The selected version beside the current one (text on both sides, not the current itself).
    public var showsBoth: Bool { !showsDiff && previewIsText && currentText != nil && preview != nil && selected?.kind != .current }

    /// The lines the content shows, as searched and scrolled: the diff's, or the selected
    /// version's (beside the current one's, whichever is longer counts).
    public var contentLines: [String] {
        if showsDiff, let cur = currentText, let p = preview { return LineDiff.diff(cur, p).map(\.text) }
        return preview ?? []
    }

    /// The next line (after `from`, or before it when `backwards`) holding the search text,
    /// wrapping around; nil when none does.
    public func match(from: Int, backwards: Bool = false) -> Int? {
        // Wrapping around from `from`, `from` itself last.
        let lines = contentLines
        guard !search.isEmpty, !lines.isEmpty else { return nil }
        for step in 1...lines.count {
            let i = ((from + (backwards ? -step : step)) % lines.count + lines.count) % lines.count
            if lines[i].range(of: search, options: .caseInsensitive) != nil { return i }
        }
        return nil
    }
}

/// A change made in the Files view that `z` can take back.
public enum FilesUndo: Equatable, Sendable {
    /// Deleted on every device (in the server's trash): `z` restores it.
    case deleted(RelativePath)
    /// Renamed: `z` gives it its old name again.
    case renamed(from: RelativePath, to: RelativePath)
    /// Changes remembered.
    public static let depth = 50
}

/// One write made from the Settings view and what its keys held before it (nil: absent).
public struct SettingsUndo: Equatable, Sendable {
    public var previous: [String: KVValue?]
    public var what: String
    /// Writes remembered.
    public static let depth = 50
}

/// The Settings view: every key, the selection, and keys recently changed elsewhere.
public struct SettingsState: Equatable, Sendable {
    /// Every key the store holds (the size checks use these).
    public var all: [KVEntry] = [] { didSet { refilter() } }
    /// The keys shown: those whose name contains the filter (any case); all without one.
    public private(set) var entries: [KVEntry] = []
    /// `/` in Settings: words a key's name must contain.
    public var filter = "" { didSet { refilter() } }
    public var cursor = ListCursor()
    /// Keys changed by another device, highlighted until the given time.
    public var highlighted: [String: Date] = [:]
    public var usage: (keys: Int, bytes: Int) = (0, 0)
    /// A key just added here: selected once the store lists it.
    public var toSelect: String?
    /// Device names by ID, for who changed a key ("this device" for this one).
    public var deviceNames: [DeviceID: String] = [:]
    /// Writes made from this screen, newest last, with what they replaced (`z` undoes one).
    public var undo: [SettingsUndo] = []
    public init() {}

    /// Who changed a key last and when, in words ("phone, 2026-11-27 10:42").
    public func provenance(_ e: KVEntry, precise: Bool = false) -> String {
        let when = Date(timeIntervalSince1970: Double(e.stamp.wallMillis) / 1000)
        let who = deviceNames[e.device] ?? "device \(e.device.description.prefix(8))"
        return "\(who), \(precise ? TimeFormat.precise(when) : TimeFormat.short(when))"
    }
    public var selected: KVEntry? { entries.indices.contains(cursor.index) ? entries[cursor.index] : nil }
    mutating func refilter() {
        entries = filter.isEmpty ? all : all.filter { $0.key.range(of: filter, options: .caseInsensitive) != nil }
    }
    public static func == (a: SettingsState, b: SettingsState) -> Bool {
        a.all == b.all && a.filter == b.filter && a.cursor == b.cursor && a.highlighted == b.highlighted && a.usage == b.usage && a.toSelect == b.toSelect && a.deviceNames == b.deviceNames && a.undo == b.undo
    }
}

/// What the status bar shows.
public struct StatusInfo: Equatable, Sendable {
    public var account = ""
    public var server = ""
    public var device = ""
    /// The synced folder on this device (for `e` and `o`).
    public var folder = ""
    public var state = "offline"
    /// Syncing is paused (`P`; the header says `paused`).
    public var paused = false
    public var uploads = EngineStatus.Transfers()
    public var downloads = EngineStatus.Transfers()
    public var conflicts = 0
    /// Bytes per second over the last few seconds.
    public var throughput: Double = 0
    public init() {}
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
    case loadTrash
    /// Switch to a theme (`:theme NAME`), or read the theme and config.toml again (`Ctrl-R`).
    case setTheme(String)
    case reloadLook
    case restore(RelativePath)
    case emptyTrash
    case syncNow
    case quit
}

/// The Trash view's list (loaded when the view opens, and after each restore or purge).
public struct TrashState: Equatable, Sendable {
    public var items: [ItemRecord] = []
    public var cursor = ListCursor()
    public var loaded = false
    public init() {}
    public var selected: ItemRecord? { items.indices.contains(cursor.index) ? items[cursor.index] : nil }
}

/// The whole front end's state: plain values, changed only by the controller (keys) and by
/// events (engine results), read by the views.
public struct AppState: Sendable {
    public var view: ViewID = .files
    public var versions: VersionsState?
    public var help = false
    /// The first help line shown (the help box scrolls when it is taller than the screen).
    public var helpTop = 0
    /// The help shows only lines whose key or text contains this (case-insensitive; `/` sets it).
    public var helpFilter = ""
    public var prompt: Prompt?
    public var confirm: Confirmation?
    public var flash: Flash?
    /// Rows the lists show (the app sets it from the terminal's height on every frame): PgDn
    /// and PgUp move by about that much. It was always 10, whatever the window.
    public var pageRows = 10
    /// The terminal's size (the app sets it on every frame): what the help box can show.
    public var screenWidth = 80, screenHeight = 24
    public var files = FilesState()
    public var conflictCursor = ListCursor()
    /// The Conflicts view's staged decisions and marks.
    public var choices = ConflictChoices()
    /// Deletes and renames made in Files, newest last (`z` takes back one).
    public var filesUndo: [FilesUndo] = []
    /// The Trash view (`4`): what the server's trash holds, newest deletion first.
    public var trash = TrashState()
    public var settings = SettingsState()
    public var status = StatusInfo()
    public var quit = false
    public init() {}
}
