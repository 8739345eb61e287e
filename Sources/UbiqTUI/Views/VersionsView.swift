import Foundation
import UbiqCore

/// The Versions view: every version of one item labelled by device, date and size (never
/// "ours/theirs"), and a preview of the selected one or its diff against the current version.
enum VersionsView {
    static func render(_ v: VersionsState, _ s: inout ScreenBuffer, _ r: Rect, _ c: RenderContext) {
        let listH = min(max(3, v.rows.count + 2), max(3, r.height / 2))
        let top = Rect(x: r.x, y: r.y, width: r.width, height: listH)
        Box.draw(top, title: "Versions of \(v.path)", &s, c)
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
        let selectedLabel = v.selected.map { "\($0.record.deviceName) \(c.dot) \(TimeFormat.precise($0.record.modified))" } ?? ""
        let showDiff = v.showDiff && v.previewIsText && v.currentText != nil && v.selected?.kind != .current
        Box.draw(bottom, title: showDiff ? "Diff: current → \(selectedLabel)" : "Preview: \(selectedLabel)\(v.previewIsText ? "" : " (hex)")", &s, c, focused: false)
        let pin = bottom.inset(1)
        guard let preview = v.preview else {
            if v.selected != nil { s.put("loading…", x: pin.x + 1, y: pin.y, role: "ui.hint.text") }
            return
        }
        if showDiff, let cur = v.currentText {
            for (n, d) in LineDiff.diff(cur, preview).prefix(pin.height).enumerated() {
                let (mark, role) = switch d.kind { case .same: ("  ", "ui.text"); case .added: ("+ ", "diff.add"); case .removed: ("- ", "diff.del") }
                s.put(mark + d.text, x: pin.x + 1, y: pin.y + n, maxWidth: pin.width - 1, role: role)
            }
        } else {
            for (n, l) in preview.prefix(pin.height).enumerated() {
                s.put(l, x: pin.x + 1, y: pin.y + n, maxWidth: pin.width - 1, role: "ui.text")
            }
        }
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
