import Foundation
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol

/// Results arriving from the engine (on the main queue).
public enum AppEvent: Sendable {
    case gathered([MetadataItem])
    case update(QueryDiff)
    case status(EngineStatus, throughput: Double)
    case settings([KVEntry], keys: Int, bytes: Int)
    case settingsChanged(keys: [String], reason: SettingsChangeReason, at: Date)
    /// A change made in Files worked: the message, and how `z` takes it back.
    case filesDone(String, undo: FilesUndo)
    /// Settings written from this screen, with what the keys held before (for `z`).
    case settingsWritten(previous: [String: KVValue?], what: String)
    /// The account's devices: names for who changed a setting (`current`: this device).
    case devices([DeviceInfo])
    /// A key's history arrived (or why it did not).
    case keyHistory(key: String, entries: [KVEntry]?, devices: [DeviceInfo]?, error: String?)
    case versions(RelativePath, VersionsResponse)
    case preview(VersionID, lines: [String], isText: Bool, currentText: [String]?)
    /// A refusal to show: its message, and its stable code when the daemon gave one.
    case failed(String, code: ErrorCode? = nil)
    case done(String)
    case trash([ItemRecord])
    /// The device's containers (`:container` opens the picker with them; `shown`: the one on screen).
    case containers([ContainerState], shown: String?)
}

extension AppState {
    /// How long a key changed by another device stays highlighted.
    static let highlightTime: TimeInterval = 3

    public mutating func apply(_ event: AppEvent) -> [Effect] {
        switch event {
        case .gathered(let items):
            files.gather(items)
            restoreFolderIfListed()
        case .update(let diff):
            files.apply(diff)
            let conflicted = files.conflicted
            conflictCursor.clamp(count: conflicted.count)
            if !choices.isEmpty || !choices.marked.isEmpty { choices.keep(only: Set(conflicted.map(\.path))) }
        case .status(let s, let throughput):
            status.account = s.account ?? ""
            status.server = s.server ?? ""
            status.device = s.device ?? ""
            status.folder = s.folder ?? ""
            status.paused = s.paused == true
            status.state = status.paused ? "paused" : s.state.rawValue
            status.uploads = s.uploads
            status.downloads = s.downloads
            status.conflicts = s.conflicts
            status.throughput = throughput
            status.waiting = s.waiting ?? 0
            status.retryIn = s.retryIn
            status.joining = s.joining ?? []
            status.watch = s.watch
            // An error about being offline goes once the engine is online again (#44 row 5: it
            // stayed after the server came back).
            if s.state == .online, flash?.aboutOffline == true { flash = nil }
        case .settings(let entries, let keys, let bytes):
            var keep = settings.selected?.key
            if let added = settings.toSelect, entries.contains(where: { $0.key == added }) {
                keep = added
                settings.toSelect = nil
            }
            if let added = keep, settings.toSelect == nil, !settings.filter.isEmpty,
               added.range(of: settings.filter, options: .caseInsensitive) == nil, entries.contains(where: { $0.key == added }) {
                settings.filter = ""  // a key just added is shown, even when the filter would hide it
            }
            settings.all = entries
            settings.usage = (keys, bytes)
            if let keep, let at = settings.entries.firstIndex(where: { $0.key == keep }) { settings.cursor.index = at }
            settings.cursor.clamp(count: settings.entries.count)
            // A change may be to the key whose history is shown: read it again.
            return settings.historyToLoad(force: true)
        case .filesDone(let message, let undo):
            flash = Flash(text: message, level: .info)
            filesUndo.append(undo)
            if filesUndo.count > FilesUndo.depth { filesUndo.removeFirst() }
        case .settingsWritten(let previous, let what):
            settings.undo.append(SettingsUndo(previous: previous, what: what))
            if settings.undo.count > SettingsUndo.depth { settings.undo.removeFirst() }
        case .devices(let list):
            settings.deviceNames = Dictionary(list.map { ($0.id, $0.current ? "this device" : $0.name) }, uniquingKeysWith: { a, _ in a })
        case .keyHistory(let key, let entries, let devices, let error):
            guard settings.history?.key == key else { return [] }
            settings.history?.entries = entries
            settings.history?.error = error
            if let devices { return apply(.devices(devices)) }
        case .settingsChanged(let keys, let reason, let at):
            for k in keys { settings.highlighted[k] = at.addingTimeInterval(Self.highlightTime) }
            if reason == .quotaViolationChange { flash = Flash(text: "the server refused settings over the 1 MB limit: \(keys.joined(separator: ", "))", level: .error) }
            // An edit in progress is never overwritten; say that the key changed meanwhile.
            if var p = prompt, case .value(let key, _, _) = p.purpose, keys.contains(key) {
                let now = settings.all.first { $0.key == key }?.value?.displayText ?? "(removed)"
                let whereFrom = reason == .localChange ? "on this device (another program)" : "on another device"
                p.notice = "changed \(whereFrom) to \(TextWidth.fit(now, 30)): Enter saves yours, Esc keeps theirs"
                prompt = p
            }
        case .versions(let path, let r):
            guard var v = versions, v.path == path else { return [] }
            v.rows = (r.current.map { [VersionRow(kind: .current, record: $0)] } ?? []) + r.conflicts.map { VersionRow(kind: .conflict, record: $0) }
                + r.others.map { VersionRow(kind: .history, record: $0) }
            v.loading = false
            // Start on the first conflict version when there is one.
            v.cursor.index = v.rows.firstIndex { $0.kind == .conflict } ?? 0
            let e = previewEffect(&v)
            let ahead = v.typedAhead
            v.typedAhead = nil
            versions = v
            return e + (ahead.map { handleVersions($0) } ?? [])
        case .preview(let id, let lines, let isText, let currentText):
            guard var v = versions, v.previewFor == id else { return [] }
            v.preview = lines
            v.previewIsText = isText
            v.currentText = currentText
            versions = v
        case .failed(let message, let code):
            flash = Flash(text: message, level: .error)
            // Said because the server is out of reach: it goes when the device is back online.
            flash?.aboutOffline = code == .serverUnreachable
            if versions?.loading == true { versions?.loading = false; versions?.error = message }
        case .done(let message):
            flash = Flash(text: message, level: .info)
        case .containers(let list, let shown):
            picker = ContainerPicker(containers: list, shown: shown)
        case .trash(let items):
            let keep = trash.selected?.id
            trash.items = items
            trash.loaded = true
            if let keep, let at = items.firstIndex(where: { $0.id == keep }) { trash.cursor.index = at }
            trash.cursor.clamp(count: items.count)
        }
        return []
    }

    /// Drops highlights and status-line messages whose time has passed; true if any went (the
    /// screen needs a redraw).
    public mutating func expireTimed(now: Date) -> Bool {
        let before = settings.highlighted.count
        settings.highlighted = settings.highlighted.filter { $0.value > now }
        var changed = settings.highlighted.count != before
        if var f = flash {
            if let seen = f.seen {
                if now.timeIntervalSince(seen) >= f.lifetime { flash = nil; changed = true }
            } else {
                f.seen = now
                flash = f
            }
        }
        return changed
    }
}

/// Dates as the front end shows them: `2026-11-22 10:42` in the local time zone (UTC in tests),
/// with seconds where versions minutes apart must be told apart.
public enum TimeFormat {
    nonisolated(unsafe) static var timeZone = TimeZone.current
    private static let lock = NSLock()
    nonisolated(unsafe) private static var formatters: [String: DateFormatter] = [:]

    /// Sets the zone dates are shown in (tests use UTC).
    public static func use(_ zone: TimeZone) { lock.withLock { timeZone = zone; formatters = [:] } }

    /// To the minute (lists).
    public static func short(_ d: Date?) -> String { format(d, "yyyy-MM-dd HH:mm") }

    /// To the second (versions: every version the demo made in one minute read `22:18`).
    public static func precise(_ d: Date?) -> String { format(d, "yyyy-MM-dd HH:mm:ss") }

    static func format(_ d: Date?, _ pattern: String) -> String {
        guard let d else { return "" }
        return lock.withLock {
            let f = formatters[pattern] ?? {
                let f = DateFormatter()
                f.locale = Locale(identifier: "en_US_POSIX")
                f.timeZone = timeZone
                f.dateFormat = pattern
                formatters[pattern] = f
                return f
            }()
            return f.string(from: d)
        }
    }
}
