import Foundation
import UbiqCore
import UbiqProtocol

/// One write made from the Settings view and what its keys held before it (nil: absent).
public struct SettingsUndo: Equatable, Sendable {
    public var previous: [String: KVValue?]
    public var what: String
    /// Writes remembered.
    public static let depth = 50
}

/// A key's last writes as the server keeps them (`i` in Settings), newest first.
public struct KeyHistory: Equatable, Sendable {
    public var key: String
    /// nil while loading.
    public var entries: [KVEntry]?
    public var error: String?
    public init(key: String) { self.key = key }
}

/// The Settings view: every key, the selection, and keys recently changed elsewhere.
public struct SettingsState: Equatable, Sendable {
    /// Every key the store holds (the size checks use these).
    public var all: [KVEntry] = [] { didSet { refilter() } }
    /// The keys shown: those whose name contains the filter (any case); all without one.
    public private(set) var entries: [KVEntry] = []
    /// `/` in Settings: words a key's name must contain.
    public var filter = "" { didSet { refilter() } }
    /// `v`: the key whose whole value is shown, read only, and its first line shown.
    public var viewing: String?
    public var viewTop = 0
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
    /// `i`: the history pane is open, and the selected key's history in it.
    public var historyOpen = false
    public var history: KeyHistory?
    public init() {}

    /// Who changed a key last and when, in words ("phone, 2026-11-27 10:42").
    public func provenance(_ e: KVEntry, precise: Bool = false) -> String {
        let when = Date(timeIntervalSince1970: Double(e.stamp.wallMillis) / 1000)
        let who = deviceNames[e.device] ?? "device \(e.device.description.prefix(8))"
        return "\(who), \(precise ? TimeFormat.precise(when) : TimeFormat.short(when))"
    }
    /// A key while a value is shown whole (`v`): j k PgUp PgDn scroll it; Esc, q, v, Enter close it.
    public mutating func viewKey(_ key: Key, page: Int) {
        switch key {
        case .char("j"), .down: viewTop += 1
        case .char("k"), .up: viewTop = max(0, viewTop - 1)
        case .pageDown: viewTop += page
        case .pageUp: viewTop = max(0, viewTop - page)
        case .escape, .char("q"), .char("v"), .enter: viewing = nil
        default: break
        }
    }

    public var selected: KVEntry? { entries.indices.contains(cursor.index) ? entries[cursor.index] : nil }

    /// With the history pane open, the selected key's history when it is not the one shown
    /// (the selection moved, or the store changed): what to load.
    mutating func historyToLoad(force: Bool = false) -> [Effect] {
        guard historyOpen, let key = selected?.key, force || history?.key != key else { return [] }
        history = KeyHistory(key: key)
        return [.loadKeyHistory(key)]
    }
    mutating func refilter() {
        entries = filter.isEmpty ? all : all.filter { $0.key.range(of: filter, options: .caseInsensitive) != nil }
    }
    public static func == (a: SettingsState, b: SettingsState) -> Bool {
        a.all == b.all && a.filter == b.filter && a.cursor == b.cursor && a.highlighted == b.highlighted && a.usage == b.usage && a.toSelect == b.toSelect && a.deviceNames == b.deviceNames && a.undo == b.undo
            && a.historyOpen == b.historyOpen && a.history == b.history
    }
}
