import Foundation
import UbiqCore

/// The Versions view: every version of one item labelled by device, date and size (never
/// "ours/theirs"), and a preview of the selected one or its diff against the current version.
enum VersionsView {
    static func render(_ v: VersionsState, _ s: inout ScreenBuffer, _ r: Rect, _ c: RenderContext) {
        if v.maximized, r.height >= 3 {
            content(v, &s, r, c)
            return
        }
        let listH = min(max(3, v.rows.count + 2), max(3, r.height / 2))
        let top = Rect(x: r.x, y: r.y, width: r.width, height: listH)
        Box.draw(top, title: "Versions of \(c.shown(v.path.string))", &s, c, focused: !v.contentFocused)
        let inner = top.inset(1)
        if v.loading { s.put("loading versions…", x: inner.x + 1, y: inner.y, role: "ui.hint.text") }
        if let e = v.error { s.put(e, x: inner.x + 1, y: inner.y, maxWidth: inner.width - 1, role: "ui.flash.error") }
        var cur = v.cursor
        cur.scroll(height: inner.height)
        for (n, row) in v.rows[min(cur.top, v.rows.count)..<min(v.rows.count, cur.top + inner.height)].enumerated() {
            let y = inner.y + n
            let selected = cur.top + n == v.cursor.index
            let base = selected ? "ui.selection" : "ui.text"
            s.fill(Rect(x: inner.x, y: y, width: inner.width, height: 1), role: base)
            let (label, role) = switch row.kind {
            case .current: ("current", "status.synced")
            case .conflict: ("conflict", "status.conflict")
            case .history: ("history", "ui.text")
            }
            s.putPadded(label, x: inner.x + 1, y: y, width: 9, role: selected ? base : role)
            let rec = row.record
            let devW = min(20, max(8, v.rows.map { TextWidth.of($0.record.deviceName) }.max() ?? 8))
            var x = inner.x + 11
            s.putPadded(rec.deviceName, x: x, y: y, width: devW, role: base); x += devW + 2
            s.putPadded(TimeFormat.precise(rec.modified), x: x, y: y, width: 19, role: base); x += 21
            s.putPadded(ByteSize.format(Int64(rec.size)), x: x, y: y, width: 10, role: base, alignRight: true); x += 12
            if x + 8 < inner.maxX { s.put(String(rec.hash.hex.prefix(8)), x: x, y: y, role: selected ? base : "ui.hint.text") }
        }
        let bottom = Rect(x: r.x, y: r.y + listH, width: r.width, height: r.height - listH)
        guard bottom.height >= 3 else { return }
        content(v, &s, bottom, c)
    }

    /// "conflict · phone · 2026-11-22 10:42:07 · 12 B": a version by kind, device, time and size.
    static func label(_ row: VersionRow?, _ c: RenderContext, size: Bool = true) -> String {
        guard let row else { return "" }
        let kind = switch row.kind { case .current: "current"; case .conflict: "conflict"; case .history: "history" }
        return "\(kind) \(c.dot) \(row.record.deviceName) \(c.dot) \(TimeFormat.precise(row.record.modified))" + (size ? " \(c.dot) \(ByteSize.format(Int64(row.record.size)))" : "")
    }

    /// The content: the selected version's preview, beside the current one's when both are
    /// text (side by side from 84 columns, stacked below), or the diff of the two (`d`). The
    /// panes scroll together (`Tab` focuses them); `/` matches are marked.
    static func content(_ v: VersionsState, _ s: inout ScreenBuffer, _ r: Rect, _ c: RenderContext) {
        let selected = label(v.selected, c), focused = v.contentFocused
        if v.details {
            details(v, &s, r, c)
            return
        }
        guard let preview = v.preview else {
            Box.draw(r, title: "Preview: \(selected)", &s, c, focused: focused)
            if v.selected != nil { s.put("loading…", x: r.x + 2, y: r.y + 1, role: "ui.hint.text") }
            return
        }
        // Where the content stands when it is longer than its pane: "12/45" (first line shown).
        // Not wrapped and scrolled sideways: from which column.
        func where_(_ count: Int, _ height: Int) -> String {
            (count > height ? " \(c.dot) \(min(count, v.scroll + 1))/\(count)" : "") + (!v.wrap && v.column > 0 ? " \(c.dot) col \(v.column + 1)" : "")
        }
        if v.showsDiff, let cur = v.currentText {
            let diff = LineDiff.diff(cur, preview)
            Box.draw(r, title: "Diff: current → \(selected)\(where_(diff.count, r.height - 2))", &s, c, focused: focused)
            draw(diffLines(diff), v, &s, r.inset(1), c)
        } else if v.showsBoth, let cur = v.currentText {
            let sideBySide = r.width >= 84
            let first = sideBySide ? Rect(x: r.x, y: r.y, width: r.width / 2, height: r.height) : Rect(x: r.x, y: r.y, width: r.width, height: r.height / 2)
            let second = sideBySide ? Rect(x: r.x + first.width, y: r.y, width: r.width - first.width, height: r.height)
                : Rect(x: r.x, y: r.y + first.height, width: r.width, height: r.height - first.height)
            // Side by side the sizes are left to the list above (the titles must fit half a screen).
            let current = label(v.rows.first { $0.kind == .current }, c, size: !sideBySide), chosen = label(v.selected, c, size: !sideBySide)
            for (box, title, lines) in [(first, current, cur), (second, chosen, preview)] where box.height >= 3 {
                Box.draw(box, title: title + where_(lines.count, box.height - 2), &s, c, focused: focused)
                draw(lines.map { ContentLine($0) }, v, &s, box.inset(1), c)
            }
        } else {
            Box.draw(r, title: "Preview: \(selected)\(v.previewIsText ? "" : " (hex)")\(where_(preview.count, r.height - 2))", &s, c, focused: focused)
            draw(preview.map { ContentLine($0) }, v, &s, r.inset(1), c)
        }
    }

    /// The selected version's details (`i` / `x`): what tells two versions apart when their
    /// content alone does not — who wrote it and when, its size and hash, whether its content
    /// is complete, and the version it was based on.
    static func details(_ v: VersionsState, _ s: inout ScreenBuffer, _ r: Rect, _ c: RenderContext) {
        Box.draw(r, title: "Details: \(label(v.selected, c, size: false))", &s, c, focused: v.contentFocused)
        let inner = r.inset(1)
        for (n, (k, value, role)) in detailLines(v, c).prefix(inner.height).enumerated() {
            s.putPadded(k, x: inner.x + 1, y: inner.y + n, width: 10, role: "ui.hint.key")
            s.put(value, x: inner.x + 12, y: inner.y + n, maxWidth: inner.width - 13, role: role)
        }
    }

    /// The details as (label, value, role) lines.
    static func detailLines(_ v: VersionsState, _ c: RenderContext) -> [(String, String, String)] {
        guard let row = v.selected else { return [("", "nothing selected", "ui.hint.text")] }
        let r = row.record
        let kind = switch row.kind {
        case .current: "current: the document's content on every device"
        case .conflict: "conflict: made beside the current one, waiting for a choice"
        case .history: "history: an earlier version (Enter makes it current again)"
        }
        var lines: [(String, String, String)] = [("kind", kind, row.kind == .conflict ? "status.conflict" : "ui.text"),
                                                  ("device", "\(r.deviceName) (\(r.device))", "ui.text"),
                                                  ("modified", TimeFormat.precise(r.modified), "ui.text"),
                                                  ("committed", TimeFormat.precise(r.committed), "ui.text"),
                                                  ("size", "\(ByteSize.format(Int64(r.size))) (\(r.size) bytes)", "ui.text"),
                                                  ("hash", r.hash.hex, "ui.text"),
                                                  ("content", r.uploaded ? "complete on the server" : "still being uploaded by \(r.deviceName)",
                                                   r.uploaded ? "ui.text" : "status.uploading")]
        if let p = r.permissions { lines.append(("mode", String(p, radix: 8), "ui.text")) }
        if let base = r.base {
            let named = v.rows.first { $0.record.id == base }.map { label($0, c, size: false) }
            lines.append(("based on", named ?? "\(base) (no longer kept)", "ui.text"))
        } else {
            lines.append(("based on", "nothing: the first version of the document", "ui.text"))
        }
        lines.append(("version", r.id.description, "ui.hint.text"))
        return lines
    }
}

/// A line diff (longest common subsequence) for small text files.
public enum LineDiff {
    public struct Line: Equatable, Sendable {
        public enum Kind: Sendable { case same, added, removed }
        public var kind: Kind
        public var text: String
    }

    /// The lines of `new` against `old`; inputs beyond 2,000 lines are cut.
    public static func diff(_ old: [String], _ new: [String]) -> [Line] {
        let a = Array(old.prefix(2000)), b = Array(new.prefix(2000))
        var lcs = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : max(lcs[i + 1][j], lcs[i][j + 1])
            }
        }
        var out: [Line] = []
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if i < a.count, j < b.count, a[i] == b[j] { out.append(Line(kind: .same, text: a[i])); i += 1; j += 1 } else if j < b.count, i == a.count || lcs[i][j + 1] > lcs[i + 1][j] {
                out.append(Line(kind: .added, text: b[j])); j += 1
            } else {
                out.append(Line(kind: .removed, text: a[i])); i += 1
            }
        }
        return out
    }

    /// Text lines, or nil when the bytes are not UTF-8 text (then a hex dump is shown).
    public static func textLines(_ bytes: [UInt8]) -> [String]? {
        guard !bytes.contains(0), let s = String(validating: bytes, as: UTF8.self) else { return nil }
        return s.split(separator: "\n", omittingEmptySubsequences: false).map { String($0).replacingOccurrences(of: "\t", with: "    ") }
    }

    /// `00000000  48 65 6c 6c 6f …  |Hello…|`
    public static func hexDump(_ bytes: [UInt8], lines: Int = 64) -> [String] {
        stride(from: 0, to: min(bytes.count, lines * 16), by: 16).map { off in
            let chunk = bytes[off..<min(bytes.count, off + 16)]
            let hex = chunk.map { String(format: "%02x", $0) }.joined(separator: " ")
            let ascii = String(chunk.map { (0x20..<0x7F).contains($0) ? Character(UnicodeScalar($0)) : "." })
            return String(format: "%08x  ", off) + hex.padding(toLength: 48, withPad: " ", startingAt: 0) + " |" + ascii + "|"
        }
    }
}
