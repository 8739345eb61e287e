import Foundation
import UbiqCore

/// The Settings view: every key with its type and value; keys changed by another device are
/// highlighted for a moment; the limits are shown.
enum SettingsView {
    static func render(_ st: SettingsState, _ s: inout ScreenBuffer, _ area: Rect, _ c: RenderContext) {
        let paneH = st.historyOpen && area.height >= 14 ? 8 : 0
        let r = Rect(x: area.x, y: area.y, width: area.width, height: area.height - paneH)
        if paneH > 0 { history(st, &s, Rect(x: area.x, y: r.maxY, width: area.width, height: paneH), c) }
        let limits = "keys \(st.usage.keys)/\(KVLimits.maxKeys) \(c.dot) \(ByteSize.format(Int64(st.usage.bytes)))/\(ByteSize.format(Int64(KVLimits.maxStoreBytes)))"
        let found = st.filter.isEmpty ? "" : " \(c.dot) /\(st.filter) (\(st.entries.count) of \(st.all.count))"
        Box.draw(r, title: "Settings (\(limits))\(found)", &s, c)
        let inner = r.inset(1)
        if st.entries.isEmpty {
            let hint = st.all.isEmpty ? "no settings yet: press a to add one" : "no key contains '\(st.filter)': / changes it, Esc shows all"
            s.put(hint, x: inner.x + 1, y: inner.y, maxWidth: inner.width - 1, role: "ui.hint.text")
            return
        }
        // Columns as wide as what they hold (#44 row 9: a long value was cut at 25 columns with
        // 20 empty ones beside it): the keys up to a third, who changed them up to 30, the rest
        // the values'.
        let keyW = min(max(8, inner.width / 3), max(8, (st.entries.map { TextWidth.of($0.key) }.max() ?? 0) + 1)), typeW = 10
        // Wide enough: who changed each key last and when (else `i` says it for the selected one).
        let byW = inner.width >= 96 ? min(30, max(10, (st.entries.map { TextWidth.of(st.provenance($0)) }.max() ?? 0))) : 0
        let valueW = inner.width - keyW - typeW - 4 - (byW > 0 ? byW + 1 : 0)
        s.putPadded("key", x: inner.x + 1, y: inner.y, width: keyW, role: "ui.title")
        s.putPadded("type", x: inner.x + 2 + keyW, y: inner.y, width: typeW, role: "ui.title")
        s.putPadded("value", x: inner.x + 3 + keyW + typeW, y: inner.y, width: valueW, role: "ui.title")
        if byW > 0 { s.putPadded("changed by", x: inner.x + 4 + keyW + typeW + valueW, y: inner.y, width: byW, role: "ui.title") }
        var cur = st.cursor
        cur.scroll(height: inner.height - 1)
        for (n, e) in st.entries[cur.top..<min(st.entries.count, cur.top + inner.height - 1)].enumerated() {
            let y = inner.y + 1 + n
            let selected = cur.top + n == st.cursor.index
            let remote = (st.highlighted[e.key].map { $0 > c.now } ?? false)
            let base = selected ? "ui.selection" : remote ? "kv.remote" : "ui.text"
            s.fill(Rect(x: inner.x, y: y, width: inner.width, height: 1), role: base)
            s.hit(Rect(x: inner.x, y: y, width: inner.width, height: 1), .pick(cur.top + n))
            s.putPadded(e.key, x: inner.x + 1, y: y, width: keyW, role: selected || remote ? base : "kv.key")
            s.putPadded(e.value?.typeName ?? "", x: inner.x + 2 + keyW, y: y, width: typeW, role: base)
            s.putPadded(e.value?.displayText ?? "", x: inner.x + 3 + keyW + typeW, y: y, width: valueW,
                        role: selected || remote ? base : "kv.value")
            if byW > 0 { s.putPadded(st.provenance(e), x: inner.x + 4 + keyW + typeW + valueW, y: y, width: byW, role: selected || remote ? base : "ui.hint.text") }
        }
    }
}

extension SettingsView {
    /// The history pane (`i`): the selected key's last writes, newest first — when, which
    /// device, what value (a delete says so).
    static func history(_ st: SettingsState, _ s: inout ScreenBuffer, _ r: Rect, _ c: RenderContext) {
        let h = st.history
        Box.draw(r, title: "History of \(h?.key ?? "-") \(c.dot) newest first (i closes)", &s, c, focused: false)
        let inner = r.inset(1)
        guard let h else { return }
        if let e = h.error {
            s.put(e, x: inner.x + 1, y: inner.y, maxWidth: inner.width - 1, role: "ui.flash.error")
            return
        }
        guard let entries = h.entries else {
            s.put("loading…", x: inner.x + 1, y: inner.y, role: "ui.hint.text")
            return
        }
        if entries.isEmpty { s.put("the server keeps no history for this key yet", x: inner.x + 1, y: inner.y, role: "ui.hint.text") }
        let whoW = min(20, max(8, inner.width / 5))
        for (n, e) in entries.prefix(inner.height).enumerated() {
            let y = inner.y + n
            let when = Date(timeIntervalSince1970: Double(e.stamp.wallMillis) / 1000)
            s.putPadded(TimeFormat.precise(when), x: inner.x + 1, y: y, width: 19, role: "ui.hint.text")
            s.putPadded(st.deviceNames[e.device] ?? "device \(e.device.description.prefix(8))", x: inner.x + 22, y: y, width: whoW, role: "ui.text")
            let what = e.value.map { "(\($0.typeName)) \($0.displayText)" } ?? "(deleted)"
            // Cut with `…` (v shows the whole value).
            s.put(TextWidth.fit(what, inner.width - 24 - whoW), x: inner.x + 23 + whoW, y: y, role: e.value == nil ? "status.error" : "kv.value")
        }
    }
}

/// The help overlay, the confirmation dialog and the prompt line.
enum Overlays {
    /// What each status glyph means (drawn with the theme's glyphs, ASCII ones under `--ascii`).
    static let legend: [(glyph: String, meaning: String)] = [
        ("status.synced", "up to date"), ("status.cloud", "in the cloud only (fetch with f)"), ("status.queued", "waiting"),
        ("status.downloading", "downloading"), ("status.uploading", "uploading"), ("status.conflict", "conflict: pick a version"),
        ("status.error", "error (the row says which)"), ("status.paused", "excluded or paused"), ("ui.pinned", "pinned: kept on this device (p)"),
    ]

    static func helpLines(_ state: AppState, glyph: (String) -> String) -> [(String, String)] {
        var lines: [(String, String)] = []
        if state.versions != nil {
            lines += [("j k ↑ ↓", "choose a version"), ("Enter", "keep the selected version (asks y/N)"), ("b", "keep both: conflict versions become documents beside it"),
                      ("m e", "merge a text conflict line by line; the result opens in $VISUAL / $EDITOR, kept when no markers remain"), ("d", "toggle preview / diff against current"),
                      ("i x", "details of the selected version: device, times, size, hash, what it was based on"),
                      ("o", "open the selected version with xdg-open (a private copy; the document is not changed)"),
                      ("Tab", "focus the content (j k PgUp PgDn g G scroll it; the versions sit side by side, stacked below 84 columns)"),
                      ("w", "wrap long lines, or cut them (→ marks where a line goes on; ← → l h scroll sideways)"),
                      ("/ n N", "find text in the content; next, previous match"), ("+", "the content on the whole view, and back"), ("q Esc", "back")]
        } else {
            switch state.view {
            case .files:
                lines += [("j k ↑ ↓", "move"), ("PgUp PgDn g G", "page, top, bottom"), ("Enter l →", "open a folder, or a file's versions"),
                          ("h ← Backspace", "parent folder"), ("f", "fetch: download now"), ("E", "evict the local copy (stays in the cloud)"),
                          ("p", "pin / unpin: keep on this device, new versions too"),
                          ("X", "cancel a download (it stays in the cloud; f fetches it)"), ("z", "undo the last delete (restored) or rename made here"),
                          ("D Delete", "delete from all devices (asks y/N)"), ("/", "find by name, or filter with a predicate; Esc clears"),
                          ("F", "flat list of every file"), ("c", "versions of a conflicted file"),
                          ("Space v", "mark, mark a range (f E p D act on marks; Esc clears)"), ("s", "sort: name, size, modified, status (again reverses)"),
                          (".", "show or hide dotfiles"), ("i", "details of the selected item"), ("t", "transfers: what moves and what waits, with ETA"),
                          ("+", "the details or transfers pane on the whole view, and back"), ("Tab", "keys to the open pane (the transfers pane scrolls), and back; Esc too"),
                          ("r", "rename"), ("n", "new folder here"), ("e", "edit in $VISUAL / $EDITOR (fetched first if needed)"),
                          ("o", "open with xdg-open"), ("u", "retry now: failing items are tried again at once"),
                          ("P", "with marks: pause / resume only their transfers (no marks: all syncing)")]
                lines += [("", ""), ("status", "")]
                lines += Self.legend.map { (glyph($0.glyph), $0.meaning) }
            case .conflicts:
                lines += [("j k ↑ ↓", "move"), ("Enter", "see every version and keep one"), ("i x", "the versions with their details"),
                          ("m e", "merge a text conflict; the result opens in $VISUAL / $EDITOR"),
                          ("< ,", "stage: keep the current version"), ("> .", "stage: keep the conflict version (when there is one)"),
                          ("b", "stage: keep both (the conflict becomes a document beside it)"), ("] [", "stage: keep the newer / the older version"),
                          ("-", "skip: decide later (unstage)"),
                          ("z", "take back the last staged choice"), ("Space v", "mark (a choice applies to the marks; Esc clears)"),
                          ("A", "apply the staged choices after a summary (y/N)")]
            case .trash:
                lines += [("j k ↑ ↓", "move"), ("Enter r", "restore on every device (asks y/N)"), ("E", "empty the trash for good (type empty)"),
                          ("u Ctrl-L", "reload"), ("", "items stay 30 days, then the server purges them")]
            case .settings:
                lines += [("j k ↑ ↓", "move"), ("a", "add a key (key, type, value)"), ("e Enter", "edit the value (typed)"), ("Space", "flip a bool (others: edit)"), ("/", "find keys by name (Esc shows all)"),
                          ("r", "rename a key (one atomic write on every device)"), ("E", "every key as TOML in $VISUAL / $EDITOR; what you change is saved in one write"),
                          ("y Y", "copy the value / key=value"), ("z", "undo the last change made here (one more write)"), ("i", "history: the key's last writes, who made them and when"),
                          ("v", "the whole value, read only (wrapped; j k scroll, Esc closes)"),
                          ("D Delete", "delete the key on every device (asks y/N)"), ("", "keys changed on another device flash briefly")]
            }
        }
        lines += [("", ""), ("1 2 3 4", "Files, Conflicts, Settings, Trash"), ("[ ]", "previous, next view (in Conflicts: keep the older / newer)"), (":", "command: q, files, conflicts, kv, trash, theme NAME, sort FIELD, container [ID]"),
                  (":container", "pick the container shown (Enter shows it, n syncs a new one); :container ID goes straight there"),
                  (":approve CODE", "let in a new device of an encrypted account: the code its 'ubiq login' shows (the status line says when one waits)"),
                  ("Ctrl-R", "read the theme and config.toml again"), ("Ctrl-L", "redraw"),
                  ("y", "copy the path (Files) or value (Settings)"), ("Ctrl-Z", "suspend (fg brings it back)"), ("R F5", "sync now"), ("P", "pause or resume syncing"), ("?", "this help (q closes, / finds in it)"), ("q", "quit"), ("Ctrl-C", "quit now")]
        return lines
    }

    /// The help box: every line, wrapped to the box (nothing cut), scrolled by `helpTop` when
    /// it is taller than the screen, with where it stands in the title.
    /// The help box's width on a screen this wide.
    static func helpWidth(screen width: Int) -> Int { min(width - 4, 76) }

    /// The help's lines as the box shows them (texts wrapped to its width); glyphs are one column.
    static func helpBody(_ state: AppState, screen width: Int, glyph: (String) -> String) -> [(String, String)] {
        var all = helpLines(state, glyph: glyph)
        if !state.helpFilter.isEmpty {
            let words = state.helpFilter
            all = all.filter { (line: (String, String)) -> Bool in
                !line.1.isEmpty && (line.0.localizedCaseInsensitiveContains(words) || line.1.localizedCaseInsensitiveContains(words))
            }
            if all.isEmpty { all = [("", "nothing in the help matches '\(state.helpFilter)' (/ changes it)")] }
        }
        return all.flatMap { k, t in
            (t.isEmpty ? [""] : wrap(t, max(1, helpWidth(screen: width) - 20))).enumerated().map { ($0.offset == 0 ? k : "", $0.element) }
        }
    }

    /// The help lines the box shows at once on a screen this tall.
    /// The help box sits between the header and the status line (#44 row 12: its bottom
    /// border drew over the status line).
    static func helpRows(screen height: Int, lines: Int) -> Int { max(0, min(height - 3, lines + 2) - 2) }

    static func help(_ state: AppState, _ s: inout ScreenBuffer, _ c: RenderContext) {
        let w = helpWidth(screen: s.width)
        let lines = helpBody(state, screen: s.width, glyph: c.glyph)
        let h = min(s.height - 3, lines.count + 2), visible = helpRows(screen: s.height, lines: lines.count)
        let top = min(max(0, state.helpTop), max(0, lines.count - visible))
        let r = Rect(x: (s.width - w) / 2, y: 1 + (s.height - 3 - h) / 2, width: w, height: h)
        var title = "Help \(c.dot) \(state.versions != nil ? "Versions" : state.view.title)"
        if !state.helpFilter.isEmpty { title += " \(c.dot) /\(state.helpFilter)" }
        if lines.count > visible { title += " \(c.dot) \(top + 1)-\(top + visible)/\(lines.count) j/k" }
        Box.draw(r, title: title, &s, c)
        for (n, (k, t)) in lines.dropFirst(top).prefix(visible).enumerated() {
            s.putPadded(k, x: r.x + 2, y: r.y + 1 + n, width: 15, role: "ui.hint.key")
            s.put(t, x: r.x + 18, y: r.y + 1 + n, maxWidth: w - 20, role: "ui.text")
        }
    }

    /// Wraps text into lines of at most `width` columns (at spaces where possible).
    static func wrap(_ text: String, _ width: Int) -> [String] {
        var lines: [String] = [], line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false).map(String.init) {
            let candidate = line.isEmpty ? word : line + " " + word
            if TextWidth.of(candidate) <= width { line = candidate; continue }
            if !line.isEmpty { lines.append(line) }
            line = TextWidth.of(word) <= width ? word : TextWidth.fit(word, width)
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    static func confirm(_ cf: Confirmation, _ s: inout ScreenBuffer, _ c: RenderContext) {
        let w = min(s.width - 4, 64)
        let body = wrap(cf.message, w - 4)
        let h = min(s.height - 2, body.count + 4)
        let r = Rect(x: (s.width - w) / 2, y: (s.height - h) / 2, width: w, height: h)
        Box.draw(r, title: "Confirm", &s, c)
        for (n, l) in body.prefix(h - 4).enumerated() { s.put(l, x: r.x + 2, y: r.y + 1 + n, role: "ui.text") }
        var x = r.x + 2
        x += s.put("y", x: x, y: r.maxY - 2, role: "ui.hint.key")
        x += s.put(" yes   ", x: x, y: r.maxY - 2, role: "ui.text")
        x += s.put("N", x: x, y: r.maxY - 2, role: "ui.hint.key")
        s.put(" no (default)", x: x, y: r.maxY - 2, role: "ui.text")
    }

    static func prompt(_ p: Prompt, _ s: inout ScreenBuffer, y: Int) {
        s.fill(Rect(x: 0, y: y, width: s.width, height: 1), role: "ui.text")
        let label = TextWidth.fit(p.label, max(10, s.width / 2)) + ": "
        let x = s.put(label, x: 0, y: y, role: "ui.hint.key")
        // A window of the text around the caret (long input shows its end while typing). Only
        // the window is walked: a pasted megabyte costs what fits on the line.
        let room = max(1, s.width - x - 2)
        let text = p.text
        var caretIdx = text.endIndex
        for _ in 0..<p.back where caretIdx > text.startIndex { caretIdx = text.index(before: caretIdx) }
        var start = caretIdx, width = 0
        while start > text.startIndex {
            let prev = text.index(before: start)
            let w = max(0, TextWidth.of(text[prev]))
            if width + w > room / (p.back == 0 ? 1 : 2) { break }
            width += w
            start = prev
        }
        // The character an error points at stands out (its column, counted from 1).
        var column = p.errorColumn == nil ? 0 : text.distance(from: text.startIndex, to: start)
        var col = x, i = start
        while i < text.endIndex {
            if i == caretIdx { col += s.put("▏", x: col, y: y, role: "ui.hint.key") }
            let w = max(0, TextWidth.of(text[i]))
            if col + w > s.width - 1 { break }
            column += 1
            let role = p.errorColumn == column ? "ui.flash.error" : p.error != nil ? "kv.invalid" : "ui.text"
            col += s.put(String(text[i]), x: col, y: y, role: role)
            i = text.index(after: i)
        }
        if caretIdx == text.endIndex { s.put("▏", x: col, y: y, role: "ui.hint.key") }
    }
}

extension SettingsView {
    /// `v`: the selected key's whole value, read only, wrapped in a box over the view.
    static func valueView(_ st: SettingsState, _ s: inout ScreenBuffer, _ c: RenderContext) {
        guard let key = st.viewing, let e = st.all.first(where: { $0.key == key }) else { return }
        let w = min(s.width - 4, 100)
        let text = e.value?.displayText ?? "(deleted)"
        // Wrapped at spaces, within a word when it has none: every character is there to read.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).flatMap { part -> [String] in
            let chars = Array(part)
            return ContentLayout.rows([String(part)], from: 0, height: chars.count + 1, width: w - 4, wrap: true, column: 0)
                .map { String(chars[$0.start..<$0.end]) }
        }
        let h = min(s.height - 3, max(3, lines.count + 2))
        let visible = h - 2, top = min(max(0, st.viewTop), max(0, lines.count - visible))
        let r = Rect(x: (s.width - w) / 2, y: 1 + (s.height - 3 - h) / 2, width: w, height: h)
        var title = "\(key) (\(e.value?.typeName ?? "-")) \(c.dot) read only"
        if lines.count > visible { title += " \(c.dot) \(top + 1)-\(top + visible)/\(lines.count) j/k" }
        Box.draw(r, title: title, &s, c)
        s.fill(r.inset(1), role: "ui.text")
        for (n, line) in lines.dropFirst(top).prefix(visible).enumerated() {
            s.put(line, x: r.x + 2, y: r.y + 1 + n, maxWidth: w - 4, role: "kv.value")
        }
    }
}
