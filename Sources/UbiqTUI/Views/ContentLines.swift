import Foundation

/// One line of a version's content as the Versions view draws it: its text, a mark before it
/// that never scrolls (a diff's `+ ` / `- `), its role, and a part of it to stress (in a diff,
/// where a changed line differs from the line it replaced).
public struct ContentLine: Equatable, Sendable {
    public var text: String
    public var mark: String
    public var role: String
    /// Runs of characters of `text` drawn in `diff.change`.
    public var stressed: [Range<Int>]

    public init(_ text: String, mark: String = "", role: String = "ui.text", stressed: [Range<Int>] = []) {
        self.text = text
        self.mark = mark
        self.role = role
        self.stressed = stressed
    }
}

/// Where each line of content goes on screen (#44 row 1: lines stopped at the pane's border with
/// no sign of what was cut, so "keep this version" was a blind choice on prose). Wrapped, a line
/// takes as many rows as it needs; not wrapped, each shows from a column on (`←`/`→`), with a
/// marker on the side where it goes on. Pure: tests check it for any width.
public enum ContentLayout {
    /// Characters `[start, end)` of line `line` on one row; `first` for a line's first row;
    /// `cutLeft` / `cutRight` when the line goes on beyond the row's left / right edge.
    public struct Piece: Equatable, Sendable {
        public var line: Int
        public var start: Int
        public var end: Int
        public var first: Bool
        public var cutLeft: Bool
        public var cutRight: Bool
    }

    /// The rows of a pane `height` rows high and `width` columns wide (the text's columns, the
    /// mark's not counted), lines from `top` on: wrapped (at a space when a row would cut a
    /// word, within the word when it has none), or each from display column `column`
    /// (a marker column is kept on a side the line goes on beyond).
    public static func rows(_ lines: [String], from top: Int, height: Int, width: Int, wrap: Bool, column: Int) -> [Piece] {
        guard height > 0, width > 0 else { return [] }
        var out: [Piece] = []
        var i = max(0, top)
        while out.count < height, i < lines.count {
            let widths = lines[i].map { max(TextWidth.of($0), 1) }
            if wrap {
                var start = 0
                let chars = Array(lines[i])
                repeat {
                    var end = fill(widths, from: start, width: width)
                    // Words stay whole: a row that cuts one ends after its last space instead.
                    if end < chars.count, chars[end] != " ",
                       let space = chars[start..<end].lastIndex(of: " "), space > start {
                        end = space + 1
                    }
                    out.append(Piece(line: i, start: start, end: end, first: start == 0, cutLeft: false, cutRight: false))
                    // The space a row ends at is not carried to the start of the next.
                    start = end < chars.count && chars[end] == " " && end > start ? end + 1 : end
                } while start < widths.count && out.count < height
            } else {
                out.append(window(widths, line: i, column: column, width: width))
            }
            i += 1
        }
        return out
    }

    /// The characters of `widths` from `start` that fit in `width` columns (at least one, so a
    /// wide character in a one-column pane still moves on); returns where they end.
    static func fill(_ widths: [Int], from start: Int, width: Int) -> Int {
        var used = 0, end = start
        while end < widths.count, used + widths[end] <= width || end == start {
            used += widths[end]
            end += 1
        }
        return end
    }

    /// One line shown from display column `column`: the characters starting at or after it,
    /// less a column for each side's marker when the line goes on there.
    static func window(_ widths: [Int], line: Int, column: Int, width: Int) -> Piece {
        var start = 0, at = 0
        while start < widths.count, at < column {
            at += widths[start]
            start += 1
        }
        let cutLeft = start > 0
        let room = max(1, width - (cutLeft ? 1 : 0))
        var end = fill(widths, from: start, width: room)
        if end < widths.count, room > 1 { end = fill(widths, from: start, width: room - 1) }
        if start >= widths.count { end = start }
        return Piece(line: line, start: start, end: end, first: true, cutLeft: cutLeft, cutRight: end < widths.count)
    }

    /// The widest line's columns (how far `→` may scroll).
    public static func widest(_ lines: [String]) -> Int { lines.map { TextWidth.of($0) }.max() ?? 0 }
}

extension VersionsView {
    /// Draws content lines into `pin` as the state says (wrapped or from a column, scrolled,
    /// the search text's first match on a line marked).
    static func draw(_ lines: [ContentLine], _ v: VersionsState, _ s: inout ScreenBuffer, _ pin: Rect, _ c: RenderContext) {
        let x0 = pin.x + 1, width = pin.width - 1
        let markWidth = lines.map { TextWidth.of($0.mark) }.max() ?? 0
        let textWidth = width - markWidth
        guard textWidth > 0 else { return }
        let pieces = ContentLayout.rows(lines.map(\.text), from: v.scroll, height: pin.height, width: textWidth, wrap: v.wrap, column: v.column)
        for (n, piece) in pieces.enumerated() {
            let line = lines[piece.line], y = pin.y + n
            if piece.first, !line.mark.isEmpty { s.put(line.mark, x: x0, y: y, maxWidth: markWidth, role: line.role) }
            var x = x0 + markWidth
            if piece.cutLeft {
                x += s.put(c.ascii ? "<" : "←", x: x, y: y, role: "ui.hint.text")
            }
            let chars = Array(line.text)
            let search = searchRange(line.text, v.search)
            // Runs of one role each: the stressed part of a changed line, the search match over all.
            var k = piece.start
            while k < piece.end {
                let role = roleAt(k, line: line, search: search)
                var e = k + 1
                while e < piece.end, roleAt(e, line: line, search: search) == role { e += 1 }
                x += s.put(String(chars[k..<e]), x: x, y: y, maxWidth: x0 + width - x, role: role)
                k = e
            }
            if piece.cutRight { s.put(c.ascii ? ">" : "→", x: x0 + width - 1, y: y, role: "ui.hint.text") }
        }
    }

    static func roleAt(_ k: Int, line: ContentLine, search: Range<Int>?) -> String {
        if let search, search.contains(k) { return "ui.marked" }
        if line.stressed.contains(where: { $0.contains(k) }) { return "diff.change" }
        return line.role
    }

    /// The first match of `search` in `text` (any case), in characters.
    static func searchRange(_ text: String, _ search: String) -> Range<Int>? {
        guard !search.isEmpty, let m = text.range(of: search, options: .caseInsensitive) else { return nil }
        let lower = text.distance(from: text.startIndex, to: m.lowerBound)
        return lower..<(lower + text.distance(from: m.lowerBound, to: m.upperBound))
    }

    /// A diff as content lines: each removed line followed by the added line that replaced it
    /// has the words where they differ stressed on both.
    static func diffLines(_ diff: [LineDiff.Line]) -> [ContentLine] {
        var out = diff.map { d -> ContentLine in
            switch d.kind {
            case .same: ContentLine(d.text, mark: "  ")
            case .added: ContentLine(d.text, mark: "+ ", role: "diff.add")
            case .removed: ContentLine(d.text, mark: "- ", role: "diff.del")
            }
        }
        var i = 0
        while i < diff.count {
            guard diff[i].kind == .removed else { i += 1; continue }
            var r = i
            while r < diff.count, diff[r].kind == .removed { r += 1 }
            var a = r
            while a < diff.count, diff[a].kind == .added { a += 1 }
            // Removed lines i..<r replaced by added lines r..<a: paired in order.
            for k in 0..<min(r - i, a - r) {
                let (old, new) = LineDiff.changedParts(diff[i + k].text, diff[r + k].text)
                out[i + k].stressed = old
                out[r + k].stressed = new
            }
            i = max(a, i + 1)
        }
        return out
    }
}

extension LineDiff {
    /// Where two versions of a line differ, word by word: the runs of characters of each that
    /// the other lacks (a longest common subsequence of words, spaces and punctuation; lines of
    /// more than 600 words are compared by their common start and end only).
    public static func changedParts(_ old: String, _ new: String) -> ([Range<Int>], [Range<Int>]) {
        let a = tokens(old), b = tokens(new)
        guard a.count <= 600, b.count <= 600 else { return ends(old, new) }
        var lcs = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                lcs[i][j] = a[i].text == b[j].text ? lcs[i + 1][j + 1] + 1 : max(lcs[i + 1][j], lcs[i][j + 1])
            }
        }
        var oldRuns: [Range<Int>] = [], newRuns: [Range<Int>] = []
        func add(_ r: Range<Int>, to runs: inout [Range<Int>]) {
            if let last = runs.last, last.upperBound == r.lowerBound { runs[runs.count - 1] = last.lowerBound..<r.upperBound } else { runs.append(r) }
        }
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if i < a.count, j < b.count, a[i].text == b[j].text {
                i += 1; j += 1
            } else if j < b.count, i == a.count || lcs[i][j + 1] >= lcs[i + 1][j] {
                add(b[j].range, to: &newRuns); j += 1
            } else {
                add(a[i].range, to: &oldRuns); i += 1
            }
        }
        return (oldRuns, newRuns)
    }

    /// Words (runs of letters and digits) and single other characters, with where each is.
    static func tokens(_ s: String) -> [(text: String, range: Range<Int>)] {
        var out: [(String, Range<Int>)] = []
        var word = "", start = 0, k = 0
        for ch in s {
            if ch.isLetter || ch.isNumber {
                if word.isEmpty { start = k }
                word.append(ch)
            } else {
                if !word.isEmpty { out.append((word, start..<k)); word = "" }
                out.append((String(ch), k..<(k + 1)))
            }
            k += 1
        }
        if !word.isEmpty { out.append((word, start..<k)) }
        return out
    }

    /// The characters of each between the two lines' common start and common end.
    static func ends(_ old: String, _ new: String) -> ([Range<Int>], [Range<Int>]) {
        let a = Array(old), b = Array(new)
        var prefix = 0
        while prefix < a.count, prefix < b.count, a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < a.count - prefix, suffix < b.count - prefix, a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
        return (prefix < a.count - suffix ? [prefix..<(a.count - suffix)] : [], prefix < b.count - suffix ? [prefix..<(b.count - suffix)] : [])
    }
}
