import Foundation

/// A colour as a theme states it; mapped down to what the terminal can show when drawn.
public enum ColorSpec: Equatable, Sendable {
    /// The terminal's own foreground or background.
    case terminalDefault
    /// One of the 16 ANSI colours (0–7 normal, 8–15 bright).
    case ansi(Int)
    /// An index of the 256-colour palette.
    case indexed(Int)
    /// 24-bit colour, with optional explicit fallbacks for 256 and 16 colours.
    case rgb(UInt8, UInt8, UInt8, c256: Int? = nil, c16: Int? = nil)

    static let ansiNames = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]

    /// Parses `default`, an ANSI name (`red`, `bright-blue`), `#rrggbb` or `0`–`255`.
    public static func parse(_ s: String) -> ColorSpec? {
        let t = s.trimmingCharacters(in: .whitespaces).lowercased()
        if t == "default" || t == "none" { return .terminalDefault }
        if let i = ansiNames.firstIndex(of: t) { return .ansi(i) }
        if t.hasPrefix("bright-"), let i = ansiNames.firstIndex(of: String(t.dropFirst(7))) { return .ansi(i + 8) }
        if t.hasPrefix("#"), t.count == 7, t.dropFirst().allSatisfy(\.isHexDigit), let v = UInt32(t.dropFirst(), radix: 16) {
            return .rgb(UInt8(v >> 16), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF))
        }
        if let n = Int(t), (0...255).contains(n) { return n < 16 ? .ansi(n) : .indexed(n) }
        return nil
    }

    /// The colour as a theme file would state it.
    public var themeText: String {
        switch self {
        case .terminalDefault: return "default"
        case .ansi(let n): return n < 8 ? Self.ansiNames[n] : "bright-" + Self.ansiNames[n - 8]
        case .indexed(let n): return String(n)
        case .rgb(let r, let g, let b, let c256, let c16):
            return String(format: "#%02x%02x%02x", r, g, b) + (c256.map { " (256: \($0))" } ?? "") + (c16.map { " (16: \($0))" } ?? "")
        }
    }

    /// The terminal colour number for a colour depth (8, 16, 256 or 1<<24 for direct colour);
    /// -1 is the terminal's default.
    public func number(depth: Int) -> Int {
        switch self {
        case .terminalDefault: return -1
        case .ansi(let n): return depth >= 16 ? n : n % 8
        case .indexed(let n): return depth >= 256 ? n : Self.to16(Self.rgbOf(index: n), depth: depth)
        case .rgb(let r, let g, let b, let c256, let c16):
            if depth >= 1 << 24 { return Int(r) << 16 | Int(g) << 8 | Int(b) }
            if depth >= 256 { return c256 ?? Self.to256(r, g, b) }
            if let c16 { return depth >= 16 ? c16 : c16 % 8 }
            return Self.to16((r, g, b), depth: depth)
        }
    }

    /// Nearest entry of the xterm 256-colour cube or grey ramp.
    static func to256(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> Int {
        func cube(_ v: UInt8) -> Int { v < 48 ? 0 : v < 115 ? 1 : (Int(v) - 35) / 40 }
        let (cr, cg, cb) = (cube(r), cube(g), cube(b))
        let levels = [0, 95, 135, 175, 215, 255]
        let cubeRGB = (levels[cr], levels[cg], levels[cb])
        let avg = (Int(r) + Int(g) + Int(b)) / 3
        let grey = avg > 238 ? 23 : max(0, (avg - 3) / 10)
        let greyV = 8 + grey * 10
        func dist(_ a: (Int, Int, Int)) -> Int { (a.0 - Int(r)) * (a.0 - Int(r)) + (a.1 - Int(g)) * (a.1 - Int(g)) + (a.2 - Int(b)) * (a.2 - Int(b)) }
        return dist((greyV, greyV, greyV)) < dist(cubeRGB) ? 232 + grey : 16 + 36 * cr + 6 * cg + cb
    }

    static let ansiRGB: [(Int, Int, Int)] = [(0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205), (229, 229, 229),
                                              (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255), (255, 0, 255), (0, 255, 255), (255, 255, 255)]

    static func rgbOf(index n: Int) -> (UInt8, UInt8, UInt8) {
        if n < 16 { let c = ansiRGB[n]; return (UInt8(c.0), UInt8(c.1), UInt8(c.2)) }
        if n >= 232 { let v = UInt8(8 + (n - 232) * 10); return (v, v, v) }
        let levels: [UInt8] = [0, 95, 135, 175, 215, 255]
        let i = n - 16
        return (levels[i / 36], levels[(i / 6) % 6], levels[i % 6])
    }

    static func to16(_ c: (UInt8, UInt8, UInt8), depth: Int) -> Int {
        let n = depth >= 16 ? 16 : 8
        var best = 0, bestD = Int.max
        for i in 0..<n {
            let a = ansiRGB[i]
            let d = (a.0 - Int(c.0)) * (a.0 - Int(c.0)) + (a.1 - Int(c.1)) * (a.1 - Int(c.1)) + (a.2 - Int(c.2)) * (a.2 - Int(c.2))
            if d < bestD { bestD = d; best = i }
        }
        return best
    }
}

/// Text attributes.
public enum TextAttribute: String, CaseIterable, Sendable {
    case bold, dim, italic, underline, reverse
}

/// How one role is drawn: colours, attributes, and the attributes used without colour.
public struct Style: Equatable, Sendable {
    public var fg: ColorSpec?
    public var bg: ColorSpec?
    public var attrs: Set<TextAttribute>
    public var mono: Set<TextAttribute>
    public init(fg: ColorSpec? = nil, bg: ColorSpec? = nil, attrs: Set<TextAttribute> = [], mono: Set<TextAttribute> = []) {
        self.fg = fg; self.bg = bg; self.attrs = attrs; self.mono = mono
    }
}

/// A glyph with its UTF-8 form and an ASCII fallback.
public struct Glyph: Equatable, Sendable {
    public var utf8: String
    public var ascii: String
    public init(_ utf8: String, _ ascii: String) { self.utf8 = utf8; self.ascii = ascii }
}

/// A loaded theme: styles by role and glyphs by name. A missing role falls back to its prefix
/// (`status.conflict` → `status`), then to the built-in default; a role is never unstyled.
public struct Theme: Equatable, Sendable {
    public var name: String
    public var variant: String
    public var styles: [String: Style]
    public var glyphs: [String: Glyph]

    public init(name: String, variant: String = "dark", styles: [String: Style], glyphs: [String: Glyph]) {
        self.name = name; self.variant = variant; self.styles = styles; self.glyphs = glyphs
    }

    /// The resolved theme as text (`ubiq themes show`): every role with its colours and
    /// attributes, as drawn in colour and without, then every glyph in both forms.
    public var listing: [String] {
        func attrs(_ a: Set<TextAttribute>) -> String { a.isEmpty ? "-" : a.map(\.rawValue).sorted().joined(separator: ",") }
        var out = ["theme \(name) (\(variant))"]
        for role in Self.roles {
            let st = style(role)
            let cols = [role.padding(toLength: 20, withPad: " ", startingAt: 0), "fg " + (st.fg?.themeText ?? "-"), "bg " + (st.bg?.themeText ?? "-"),
                        "attrs " + attrs(st.attrs), "mono " + attrs(st.mono)]
            out.append(cols.joined(separator: "  "))
        }
        for g in Self.glyphNames { out.append("\(g.padding(toLength: 20, withPad: " ", startingAt: 0))  \(glyph(g, ascii: false))  ascii \(glyph(g, ascii: true))") }
        return out
    }

    /// Every role the front end draws with.
    public static let roles = [
        "ui.text", "ui.border", "ui.border.focus", "ui.title", "ui.selection", "ui.marked", "ui.hint.key", "ui.hint.text",
        "ui.header", "ui.header.offline", "ui.tab.active", "ui.flash.info", "ui.flash.warn", "ui.flash.error",
        "status.synced", "status.cloud", "status.queued", "status.downloading", "status.uploading", "status.paused", "status.conflict", "status.error",
        "progress.done", "progress.todo", "conflict.local", "conflict.remote", "diff.add", "diff.del", "diff.change",
        "kv.key", "kv.value", "kv.modified", "kv.remote", "kv.invalid", "kv.readonly",
    ]

    /// Every glyph name the front end draws.
    public static let glyphNames = ["status.synced", "status.cloud", "status.queued", "status.downloading", "status.uploading",
                                    "status.paused", "status.conflict", "status.error", "ui.pinned", "ui.folder", "progress.done", "progress.todo"]

    /// The style for a role, falling back along its prefixes and then to `ui.text`.
    public func style(_ role: String) -> Style {
        var r = role
        while true {
            if let s = styles[r] { return s }
            guard let dot = r.lastIndex(of: ".") else { break }
            r = String(r[..<dot])
        }
        return styles["ui.text"] ?? Style()
    }

    /// A glyph in UTF-8 or ASCII form.
    public func glyph(_ name: String, ascii: Bool) -> String {
        guard let g = glyphs[name] else { return "?" }
        return ascii ? g.ascii : g.utf8
    }
}
