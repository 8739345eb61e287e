import CTuiSupport
import Foundation
import UbiqCore

/// One terminal cell: the text drawn there (one grapheme, or "" for the right half of a wide
/// character) and the theme role that styles it.
public struct Cell: Equatable, Sendable {
    public var text: String
    public var role: String
    public init(_ text: String = " ", role: String = "ui.text") { self.text = text; self.role = role }
    /// The right half of a double-width character.
    public var isContinuation: Bool { text.isEmpty }
}

/// An in-memory screen: what every view renders into. The ncurses driver copies it to the
/// terminal; tests read it as text (golden screens).
public struct ScreenBuffer: Equatable, Sendable {
    public let width: Int
    public let height: Int
    public private(set) var cells: [Cell]
    /// What a click does where: regions the views marked (a tab, a row), the last on top.
    public private(set) var hits: [Hit] = []

    /// A region a click turns into `key`.
    public struct Hit: Equatable, Sendable {
        public var rect: Rect
        public var key: Key
    }

    /// Marks `rect` as where a click means `key`.
    public mutating func hit(_ rect: Rect, _ key: Key) { hits.append(Hit(rect: rect, key: key)) }

    /// What a click at (x, y) means: the last region marked there (nil: nothing).
    public func key(atX x: Int, y: Int) -> Key? {
        hits.last { x >= $0.rect.x && x < $0.rect.maxX && y >= $0.rect.y && y < $0.rect.maxY }?.key
    }

    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: Cell(), count: self.width * self.height)
    }

    public subscript(x: Int, y: Int) -> Cell {
        get { cells[y * width + x] }
        set { cells[y * width + x] = newValue }
    }

    /// Every cell in plain ASCII, for `--ascii` (a terminal that cannot show UTF-8): symbols
    /// become their ASCII stand-ins (`…` `.`, `↑` `^`, `→` `>`, `▏` `|`, …), accented letters
    /// lose their accents, anything else is `?` — a wide character `??`, so every line keeps
    /// its width. Views choose ASCII glyphs themselves; this catches what they do not (help
    /// text, names, messages): `--ascii` printed UTF-8 before.
    public mutating func foldToASCII() {
        for i in cells.indices where !cells[i].text.utf8.allSatisfy({ $0 < 0x80 }) || cells[i].isContinuation {
            cells[i].text = cells[i].isContinuation ? "?" : Self.ascii(cells[i].text)
        }
    }

    static let asciiStandIns: [String: String] = [
        "…": ".", "·": "-", "×": "x", "→": ">", "←": "<", "↑": "^", "↓": "v", "▏": "|", "●": "*", "○": "o",
        "✓": "=", "☁": "o", "⚠": "!", "✗": "x", "‖": "p", "│": "|", "─": "-", "┌": "+", "┐": "+", "└": "+", "┘": "+",
        "▸": ">", "█": "#", "░": ".", "—": "-", "–": "-", "“": "\"", "”": "\"", "‘": "'", "’": "'",
    ]

    /// One grapheme as one ASCII character.
    static func ascii(_ g: String) -> String {
        if let a = asciiStandIns[g] { return a }
        let folded = g.folding(options: [.diacriticInsensitive, .widthInsensitive], locale: nil)
        if folded.utf8.count == 1, folded.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return folded }
        return "?"
    }

    /// Fills a rectangle with spaces of one role. A wide character cut in half by the edge
    /// of the rectangle is replaced by a space, so every line keeps its width.
    public mutating func fill(_ r: Rect, role: String) {
        let x0 = max(0, r.x), x1 = min(width, r.x + r.width)
        guard x0 < x1 else { return }
        for y in max(0, r.y)..<min(height, r.y + r.height) {
            if x0 > 0, self[x0, y].isContinuation { self[x0 - 1, y] = Cell(" ", role: self[x0 - 1, y].role) }
            if x1 < width, self[x1, y].isContinuation { self[x1, y] = Cell(" ", role: self[x1, y].role) }
            for x in x0..<x1 { self[x, y] = Cell(" ", role: role) }
        }
    }

    /// Writes text at (x, y), clipped to `maxWidth` columns (and the screen). Control characters
    /// are shown as `?` (a file name can never move the cursor or change the terminal), wide
    /// characters take two cells and are never split at the edge. Returns the columns used.
    @discardableResult
    public mutating func put(_ text: String, x: Int, y: Int, maxWidth: Int? = nil, role: String = "ui.text") -> Int {
        guard y >= 0, y < height, x < width else { return 0 }
        let limit = min(width, x + (maxWidth ?? width))
        var col = x
        for g in text {
            let w = TextWidth.of(g)
            let shown = w < 0 ? "?" : String(g)
            let cw = max(w, 1)
            if col + cw > limit { break }
            if col >= 0 {
                // Overwriting half of a wide character clears its other half.
                if self[col, y].isContinuation, col > 0 { self[col - 1, y] = Cell(" ", role: self[col - 1, y].role) }
                self[col, y] = Cell(shown, role: role)
                if cw == 2 { self[col + 1, y] = Cell("", role: role) }
                if col + cw < width, self[col + cw, y].isContinuation { self[col + cw, y] = Cell(" ", role: role) }
            }
            col += cw
        }
        return col - x
    }

    /// Writes text padded with spaces (or truncated with `…`) to exactly `width` columns.
    public mutating func putPadded(_ text: String, x: Int, y: Int, width w: Int, role: String = "ui.text", alignRight: Bool = false) {
        guard w > 0 else { return }
        let fitted = TextWidth.fit(text, w)
        let tw = TextWidth.of(fitted)
        fill(Rect(x: x, y: y, width: w, height: 1), role: role)
        put(fitted, x: alignRight ? x + w - tw : x, y: y, maxWidth: w, role: role)
    }

    /// The screen as lines of text (trailing spaces kept), for golden tests.
    public var lines: [String] {
        (0..<height).map { y in (0..<width).map { self[$0, y].text }.joined() }
    }

    /// The roles along one line (for checking styles in tests).
    public func roles(line y: Int) -> [String] { (0..<width).map { self[$0, y].role } }
}

/// A rectangle on the screen.
public struct Rect: Equatable, Sendable {
    public var x, y, width, height: Int
    public init(x: Int, y: Int, width: Int, height: Int) { self.x = x; self.y = y; self.width = width; self.height = height }
    public var maxY: Int { y + height }
    public var maxX: Int { x + width }
    public func inset(_ d: Int) -> Rect { Rect(x: x + d, y: y + d, width: max(0, width - 2 * d), height: max(0, height - 2 * d)) }
}

/// Display widths as the terminal sees them (wcwidth per scalar; combining marks add nothing).
public enum TextWidth {
    /// Columns of one grapheme: 0, 1 or 2; -1 for a control character or a bidirectional
    /// override, isolate or mark (shown as `?`: a name cannot turn the text after it around).
    public static func of(_ g: Character) -> Int {
        guard let first = g.unicodeScalars.first else { return 0 }
        for s in g.unicodeScalars where TerminalCharacters.acts(s) { return -1 }
        let w = Int(ubiq_scalar_width(first.value))
        return w < 0 ? 1 : w
    }

    /// Columns of a string (a control character counts as the one `?` shown for it).
    public static func of(_ s: String) -> Int {
        s.reduce(0) { acc, g in let w = of(g); return acc + (w < 0 ? 1 : w) }
    }

    /// The string cut to at most `width` columns, ending in `…` when cut.
    public static func fit(_ s: String, _ width: Int) -> String {
        guard width > 0 else { return "" }
        if of(s) <= width { return s }
        var out = "", used = 0
        for g in s {
            let w = max(of(g), 1)
            if used + w > width - 1 { break }
            out.append(g)
            used += w
        }
        return out + "…"
    }
}
