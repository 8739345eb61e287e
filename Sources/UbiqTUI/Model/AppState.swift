import Foundation
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol

/// The three views reachable with `1` `2` `3`.
public enum ViewID: Int, Sendable, CaseIterable {
    case files = 1, conflicts, settings, trash
    public var title: String { ["", "Files", "Conflicts", "Settings", "Trash"][rawValue] }
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
    /// It says the server cannot be reached: it goes when the engine is online again.
    public var aboutOffline = false

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
    /// The `:` line's history and completion.
    public var commandLine = CommandHistory()
    public var confirm: Confirmation?
    /// The engine runs in this process (no daemon): quitting stops syncing, so a quit with
    /// changes still waiting asks first (#44 row 11).
    public var engineInProcess = false
    /// The folder to open once it is listed (the one shown when the front end was last quit);
    /// dropped at the first key that moves in Files.
    public var folderToRestore: RelativePath?
    /// The container picker (`:container`), when open.
    public var picker: ContainerPicker?
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

extension AppState {
    /// Everything shown of one container forgotten (another is about to be shown): the Files
    /// view keeps its order and dotfile choice.
    mutating func forgetContainer() {
        let sort = files.sortKey, descending = files.sortDescending, hidden = files.showHidden
        files = FilesState()
        files.setSort(sort, descending: descending)
        files.setShowHidden(hidden)
        versions = nil
        picker = nil
        conflictCursor = ListCursor()
        choices = ConflictChoices()
        filesUndo = []
        trash = TrashState()
        settings = SettingsState()
        view = .files
    }
}
