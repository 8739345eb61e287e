import Foundation
import UbiqCore

/// What every view needs besides the state: the theme, glyph form and the time.
public struct RenderContext: Sendable {
    public var theme: Theme
    public var ascii: Bool
    public var now: Date
    public init(theme: Theme, ascii: Bool = false, now: Date = Date()) { self.theme = theme; self.ascii = ascii; self.now = now }
    func glyph(_ name: String) -> String { theme.glyph(name, ascii: ascii) }
    /// Separators in the header, status line and titles.
    var bar: String { ascii ? "|" : "│" }
    var dot: String { ascii ? "-" : "·" }
}

/// Renders the whole screen from the state. Pure: the same state, size and context always
/// give the same screen (golden tests rely on it).
public enum Renderer {
    public static let minWidth = 40, minHeight = 10

    /// Rows a list shows in a window `height` rows high (header, status line, footer, the box's
    /// borders and a column header taken off).
    public static func listRows(height: Int) -> Int { max(1, height - 6) }

    /// Rows the list shows in this state (less the details pane's when it is open).
    public static func listRows(height: Int, _ state: AppState) -> Int {
        let main = height - 3
        return max(1, listRows(height: height) - (state.view == .files && state.versions == nil ? FilesView.paneHeight(state.files, main: main) : 0))
    }

    public static func render(_ state: AppState, width: Int, height: Int, context: RenderContext) -> ScreenBuffer {
        var s = drawn(state, width: width, height: height, context: context)
        if context.ascii { s.foldToASCII() }
        return s
    }

    static func drawn(_ state: AppState, width: Int, height: Int, context: RenderContext) -> ScreenBuffer {
        var s = ScreenBuffer(width: width, height: height)
        guard width >= minWidth, height >= minHeight else {
            // Word-wrapped, so the size it needs is never cut off.
            let words = "terminal too small: \(width)×\(height), needs \(minWidth)×\(minHeight)".split(separator: " ")
            var lines: [String] = [""]
            for w in words {
                let line = lines[lines.count - 1]
                if line.isEmpty || TextWidth.of(line) + 1 + TextWidth.of(String(w)) <= width { lines[lines.count - 1] += (line.isEmpty ? "" : " ") + w } else { lines.append(String(w)) }
            }
            let top = max(0, (height - lines.count) / 2)
            for (i, l) in lines.enumerated() where top + i < height { s.put(TextWidth.fit(l, width), x: 0, y: top + i, role: "ui.flash.warn") }
            return s
        }
        header(state, &s, context)
        let main = Rect(x: 0, y: 1, width: width, height: height - 3)
        if let v = state.versions {
            VersionsView.render(v, &s, main, context)
        } else {
            switch state.view {
            case .files: FilesView.render(state.files, state.status, &s, main, context)
            case .conflicts: ConflictsView.render(state.files.conflicted, state.conflictCursor, choices: state.choices, &s, main, context)
            case .settings: SettingsView.render(state.settings, &s, main, context)
            case .trash: TrashView.render(state.trash, &s, main, context)
            }
        }
        statusBar(state, &s, y: height - 2, context)
        if let p = state.prompt { Overlays.prompt(p, &s, y: height - 1) } else { footer(state, &s, y: height - 1) }
        if let p = state.picker { ContainerPickerView.render(p, &s, context) }
        if state.view == .settings, state.settings.viewing != nil { SettingsView.valueView(state.settings, &s, context) }
        if state.help { Overlays.help(state, &s, context) }
        if let c = state.confirm { Overlays.confirm(c, &s, context) }
        return s
    }

    static func header(_ state: AppState, _ s: inout ScreenBuffer, _ c: RenderContext) {
        s.fill(Rect(x: 0, y: 0, width: s.width, height: 1), role: "ui.header")
        let brand = " Ubiquity "
        var x = 0
        let st = state.status
        let dot = st.state == "online" ? "●" : "○"
        let stateText = " " + (c.ascii ? (st.state == "online" ? "*" : "o") : dot) + " \(st.state) "
        let connection = c.bar + stateText + c.bar
        func tabs(compact: Bool) -> [String] {
            ViewID.allCases.map { v in
                let count = v == .conflicts && st.conflicts > 0 ? (compact ? "(\(st.conflicts))" : " (\(st.conflicts))") : ""
                // Compact (narrow screens): the current view by name, the others by number.
                let named = !compact || (state.versions == nil && state.view == v)
                return named ? "\(v.rawValue) \(v.title)\(count)" : "\(v.rawValue)\(count)"
            }
        }
        // Each tab is drawn padded by a space each side, with a column between tabs.
        func width(_ t: [String]) -> Int { t.reduce(0) { $0 + TextWidth.of($1) + 3 } - 1 }
        let full = tabs(compact: false)
        let wanted = TextWidth.of(connection) + TextWidth.of(Self.who(st, dot: c.dot, room: 1_000))
        // The tabs by name beside the brand when the state and the device fit too; else by name
        // without the brand when the state fits (#44 row 12: at 60 columns they were bare
        // numbers with room to spare); else the current one by name, the others by number.
        let withBrand = s.width - TextWidth.of(brand) - width(full) >= min(wanted, TextWidth.of(connection) + TextWidth.of(st.device) + 2)
        let withoutBrand = !withBrand && s.width - width(full) >= TextWidth.of(connection)
        let tabs = withBrand || withoutBrand ? full : tabs(compact: true)
        if !withoutBrand { x += s.put(brand, x: 0, y: 0, role: "ui.header") }
        let tabsWidth = width(tabs)
        let room = max(0, s.width - x - tabsWidth)
        x += s.put(connection + Self.who(st, dot: c.dot, room: room - TextWidth.of(connection)), x: x, y: 0, maxWidth: room, role: "ui.header")
        // Offline or paused, the state stands out in a colour of its own (#44 row 4).
        if st.state != "online", room > TextWidth.of(connection) {
            s.put(stateText, x: (withoutBrand ? 0 : TextWidth.of(brand)) + TextWidth.of(c.bar), y: 0, role: "ui.header.offline")
        }
        var tx = s.width - tabsWidth
        for (i, t) in tabs.enumerated() {
            let current = state.versions == nil && state.view.rawValue == i + 1
            // Its own role: in most themes the selection looked just like the header bar, so
            // the active tab could not be told apart.
            let w = s.put(" \(t) ", x: tx, y: 0, role: current ? "ui.tab.active" : "ui.header")
            s.hit(Rect(x: tx, y: 0, width: w, height: 1), .char(Character("\(i + 1)")))
            tx += w + 1
        }
    }

    /// Who is signed in, as much as fits in `room` columns: the account at the server and the
    /// device; then without the server; then the device alone; cut with an ellipsis, never
    /// silently (at 80 columns the device fell off and the port was cut to `127.0.0.1:392`).
    static func who(_ st: StatusInfo, dot: String, room: Int) -> String {
        guard !st.account.isEmpty, room > 2 else { return "" }
        let forms = [" \(st.account)@\(Self.host(st.server)) \(dot) \(st.device) ", " \(st.account) \(dot) \(st.device) ", " \(st.device) "]
        if let fits = forms.first(where: { TextWidth.of($0) <= room }) { return fits }
        return " " + TextWidth.fit(st.device, room - 2) + " "
    }

    static func host(_ url: String) -> String {
        url.replacingOccurrences(of: "http://", with: "").replacingOccurrences(of: "https://", with: "")
    }

    static func statusBar(_ state: AppState, _ s: inout ScreenBuffer, y: Int, _ c: RenderContext) {
        s.fill(Rect(x: 0, y: y, width: s.width, height: 1), role: "ui.text")
        if let p = state.prompt, let msg = p.error ?? p.notice {
            s.put(" " + msg, x: 0, y: y, maxWidth: s.width, role: p.error != nil ? "ui.flash.error" : "ui.flash.warn")
            return
        }
        let st = state.status
        var x = 1
        let up = st.uploads, down = st.downloads
        let active = up.running + up.queued + down.running + down.queued
        if active > 0 {
            // Files done of the run's files ("↑ 1200/10000"): both only grow while it lasts.
            func count(remaining: Int, done: Int?, total: Int?) -> String {
                guard let total, total > 0 else { return "\(remaining)" }
                return "\(done ?? 0)/\(total)"
            }
            x += s.put("\(c.glyph("status.uploading")) \(count(remaining: up.running + up.queued, done: up.done, total: up.filesTotal))",
                       x: x, y: y, role: "status.uploading") + 1
            x += s.put("\(c.glyph("status.downloading")) \(count(remaining: down.running + down.queued, done: down.done, total: down.filesTotal))",
                       x: x, y: y, role: "status.downloading") + 1
            let total = up.bytesTotal + down.bytesTotal, done = up.bytesDone + down.bytesDone
            let pct = total > 0 ? Double(done) / Double(total) : 0
            x += ProgressBar.draw(pct, &s, x: x, y: y, width: 10, c) + 1
            x += s.put(String(format: "%3.0f%%", pct * 100), x: x, y: y) + 1
            if st.throughput > 0 { x += s.put(ByteSize.format(Int64(st.throughput)) + "/s", x: x, y: y) + 1 }
            if let eta = st.eta { x += s.put("ETA " + eta, x: x, y: y) + 1 }
        } else if st.state == "online" && st.waiting == 0 {
            x += s.put("\(c.glyph("status.synced")) up to date", x: x, y: y, role: "status.synced") + 1
        } else if st.state == "online" {
            x += s.put("\(c.glyph("status.queued")) \(st.waiting) waiting", x: x, y: y, role: "status.queued") + 1
        } else {
            // "offline · 3 waiting · retry in 4 s": what waits, and when the server is tried again.
            var text = "\(c.glyph(st.state == "paused" ? "status.paused" : "status.cloud")) \(st.state)"
            if st.waiting > 0 { text += " \(c.dot) \(st.waiting) waiting" }
            if st.state == "offline", let r = st.retryIn { text += " \(c.dot) retry in \(max(1, Int(r.rounded(.up)))) s" }
            x += s.put(text, x: x, y: y, role: "status.paused") + 1
        }
        if st.conflicts > 0 {
            x += s.put(c.bar + " ", x: x, y: y, role: "ui.border")
            x += s.put("\(c.glyph("status.conflict")) \(st.conflicts) conflict\(st.conflicts == 1 ? "" : "s")", x: x, y: y, role: "status.conflict") + 1
        }
        if let first = st.joining.first, state.flash == nil {
            // A new device waits with its code: the person at this one lets it in.
            x += s.put(c.bar + " ", x: x, y: y, role: "ui.border")
            let more = st.joining.count > 1 ? " (+\(st.joining.count - 1))" : ""
            x += s.put(TextWidth.fit("\(first)\(more) asks to join: :approve CODE (the code it shows)", max(0, s.width - x - 1)), x: x, y: y, role: "status.conflict") + 1
        }
        if st.watch != nil, st.joining.isEmpty, state.flash == nil {
            // inotify ran out of watches: changes are found, but only every 30 s.
            x += s.put(c.bar + " ", x: x, y: y, role: "ui.border")
            x += s.put(TextWidth.fit("not every folder is watched: changes seen within 30 s (ubiq status)", max(0, s.width - x - 1)), x: x, y: y, role: "status.conflict") + 1
        }
        if let f = state.flash {
            x += s.put(c.bar + " ", x: x, y: y, role: "ui.border")
            s.put(TextWidth.fit(f.text, s.width - x - 1), x: x, y: y, role: "ui.flash.\(f.level.rawValue)")
        }
    }

    static func hints(_ state: AppState) -> [(String, String)] {
        if let v = state.versions, v.contentFocused {
            return [("j/k", "scroll"), v.wrap ? ("w", "no wrap") : ("←/→", "sideways"), ("/", "find"), ("n/N", "next/prev"), ("Tab", "versions"), ("Enter", "keep"),
                    ("q", "back"), ("?", "help")]
        }
        if state.versions != nil {
            return [("j/k", "choose"), ("Tab", "content"), ("Enter", "keep"), ("b", "keep both"), ("d", "diff/preview"), ("q", "back"), ("?", "help")]
        }
        switch state.view {
        case .files:
            return [("j/k", "move"), ("Enter", "open"), ("h", "back"), ("f", "fetch"), ("E", "evict"), ("D", "delete"), ("/", "filter"),
                    ("F", "flat"), ("?", "help"), ("q", "quit")]
        case .conflicts: return [("j/k", "move"), ("Enter", "versions"), ("< > b", "stage"), ("A", "apply"), ("?", "help"), ("q", "quit")]
        case .settings: return [("j/k", "move"), ("a", "add"), ("e", "edit"), ("D", "delete"), ("?", "help"), ("q", "quit")]
        case .trash: return [("j/k", "move"), ("Enter", "restore"), ("E", "empty"), ("?", "help"), ("q", "quit")]
        }
    }

    /// The key hints: as many of the view's as fit, and always help and quit (or back), which
    /// fell off at 80 columns when they came last.
    static func footer(_ state: AppState, _ s: inout ScreenBuffer, y: Int) {
        s.fill(Rect(x: 0, y: y, width: s.width, height: 1), role: "ui.text")
        let all = hints(state)
        let kept = all.filter { $0.0 == "?" || $0.0 == "q" }
        func width(_ h: (String, String)) -> Int { TextWidth.of(h.0) + TextWidth.of(h.1) + 3 }
        var room = s.width - 1 - kept.reduce(0) { $0 + width($1) }
        let shown = all.filter { h in
            if kept.contains(where: { $0 == h }) { return true }
            guard width(h) <= room else { room = -1; return false }  // in order: none after a gap
            room -= width(h)
            return true
        }
        var x = 1
        for (k, t) in shown where x + width((k, t)) <= s.width {
            x += s.put(k, x: x, y: y, role: "ui.hint.key") + 1
            x += s.put(t, x: x, y: y, role: "ui.hint.text") + 2
        }
    }
}

/// A horizontal progress bar made of the theme's progress glyphs.
enum ProgressBar {
    @discardableResult
    static func draw(_ fraction: Double, _ s: inout ScreenBuffer, x: Int, y: Int, width: Int, _ c: RenderContext) -> Int {
        let f = max(0, min(1, fraction.isFinite ? fraction : 0))
        let done = Int((f * Double(width)).rounded(.down))
        s.put(String(repeating: c.glyph("progress.done"), count: done), x: x, y: y, role: "progress.done")
        s.put(String(repeating: c.glyph("progress.todo"), count: width - done), x: x + done, y: y, role: "progress.todo")
        return width
    }
}

/// A bordered box with a title.
enum Box {
    static func draw(_ r: Rect, title: String, _ s: inout ScreenBuffer, _ c: RenderContext, focused: Bool = true) {
        guard r.width >= 2, r.height >= 2 else { return }
        let role = focused ? "ui.border.focus" : "ui.border"
        let (h, v, tl, tr, bl, br) = c.ascii ? ("-", "|", "+", "+", "+", "+") : ("─", "│", "┌", "┐", "└", "┘")
        s.fill(r, role: "ui.text")
        s.put(tl + String(repeating: h, count: r.width - 2) + tr, x: r.x, y: r.y, role: role)
        for y in (r.y + 1)..<(r.maxY - 1) {
            s.put(v, x: r.x, y: y, role: role)
            s.put(v, x: r.maxX - 1, y: y, role: role)
        }
        s.put(bl + String(repeating: h, count: r.width - 2) + br, x: r.x, y: r.maxY - 1, role: role)
        if !title.isEmpty { s.put(" " + title + " ", x: r.x + 2, y: r.y, maxWidth: r.width - 4, role: "ui.title") }
    }
}
