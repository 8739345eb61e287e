import Foundation
import TOMLKit

/// A theme that cannot be used: the message names the theme and, for syntax errors, the line.
public struct ThemeError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The TOML shape of `Themes/*.toml`.
struct ThemeFile: Decodable {
    var schema: Int?
    var name: String?
    var variant: String?
    var inherits: String?
    var monochrome: Bool?
    var palette: [String: ColorValue]?
    var styles: [String: StyleEntry]?
    var glyphs: [String: GlyphEntry]?

    /// `"red"`, `"#rrggbb"`, a palette name, `0`–`255`, or `{ rgb, c256, c16 }`.
    enum ColorValue: Decodable {
        case text(String)
        case number(Int)
        case table(rgb: String?, c256: Int?, c16: Int?)

        enum Keys: String, CodingKey { case rgb, c256, c16 }

        init(from decoder: Decoder) throws {
            if let c = try? decoder.singleValueContainer() {
                if let s = try? c.decode(String.self) { self = .text(s); return }
                if let n = try? c.decode(Int.self) { self = .number(n); return }
            }
            let k = try decoder.container(keyedBy: Keys.self)
            self = .table(rgb: try k.decodeIfPresent(String.self, forKey: .rgb), c256: try k.decodeIfPresent(Int.self, forKey: .c256),
                          c16: try k.decodeIfPresent(Int.self, forKey: .c16))
        }
    }

    struct StyleEntry: Decodable {
        var fg: ColorValue?
        var bg: ColorValue?
        var attrs: [String]?
        var mono: [String]?
    }

    struct GlyphEntry: Decodable {
        var utf8: String
        var ascii: String
    }
}

/// Finds, parses and resolves themes: a search path of folders, then the copies compiled into
/// the binary. `inherits` chains are followed (cycles refused); a role a theme leaves out comes
/// from its parent, and every theme's last ancestor is the built-in default.
public struct ThemeLoader: Sendable {
    public var searchPaths: [URL]
    public var builtins: [String: String]

    public init(searchPaths: [URL], builtins: [String: String] = BuiltinThemes.sources) {
        self.searchPaths = searchPaths
        self.builtins = builtins
    }

    /// The search path of the design: `$XDG_CONFIG_HOME/ubiquity/themes`,
    /// `$XDG_DATA_HOME/ubiquity/themes`, each `$XDG_DATA_DIRS/…/ubiquity/themes`,
    /// `<exe>/../share/ubiquity/themes`, then the compiled-in copies.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> ThemeLoader {
        let home = URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory())
        func xdg(_ key: String, _ fallback: String) -> URL {
            if let v = environment[key], v.hasPrefix("/") { return URL(fileURLWithPath: v) }
            return home.appendingPathComponent(fallback)
        }
        var paths = [xdg("XDG_CONFIG_HOME", ".config").appendingPathComponent("ubiquity/themes"),
                     xdg("XDG_DATA_HOME", ".local/share").appendingPathComponent("ubiquity/themes")]
        for d in (environment["XDG_DATA_DIRS"] ?? "/usr/local/share:/usr/share").split(separator: ":") where d.hasPrefix("/") {
            paths.append(URL(fileURLWithPath: String(d)).appendingPathComponent("ubiquity/themes"))
        }
        let exe = URL(fileURLWithPath: CommandLine.arguments.first ?? "/").resolvingSymlinksInPath()
        paths.append(exe.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("share/ubiquity/themes"))
        return ThemeLoader(searchPaths: paths)
    }

    /// Theme names available, with where each comes from (the first found wins).
    public func available() -> [(name: String, source: String)] {
        var out: [String: String] = [:]
        for dir in searchPaths.reversed() {
            for f in (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [] where f.hasSuffix(".toml") {
                out[String(f.dropLast(5))] = dir.appendingPathComponent(f).path
            }
        }
        for name in builtins.keys where out[name] == nil { out[name] = "built in" }
        return out.map { ($0.key, $0.value) }.sorted { $0.name < $1.name }
    }

    /// The text of a theme by name or path, and where it came from.
    func source(_ nameOrPath: String) throws -> (text: String, origin: String) {
        if nameOrPath.contains("/") || nameOrPath.hasSuffix(".toml") {
            guard let t = try? String(contentsOfFile: nameOrPath, encoding: .utf8) else { throw ThemeError("cannot read theme file \(nameOrPath)") }
            return (t, nameOrPath)
        }
        guard nameOrPath.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }), !nameOrPath.isEmpty else {
            throw ThemeError("'\(nameOrPath)' is not a theme name")
        }
        for dir in searchPaths {
            let f = dir.appendingPathComponent(nameOrPath + ".toml")
            if let t = try? String(contentsOf: f, encoding: .utf8) { return (t, f.path) }
        }
        if let t = builtins[nameOrPath] { return (t, "built in") }
        throw ThemeError("no theme named '\(nameOrPath)' (available: \(available().map(\.name).joined(separator: ", ")))")
    }

    /// Loads and resolves a theme.
    public func load(_ nameOrPath: String) throws -> Theme {
        var seen: [String] = []
        return try resolve(nameOrPath, seen: &seen)
    }

    func resolve(_ nameOrPath: String, seen: inout [String]) throws -> Theme {
        guard !seen.contains(nameOrPath) else { throw ThemeError("theme inheritance loops: \((seen + [nameOrPath]).joined(separator: " → "))") }
        guard seen.count < 8 else { throw ThemeError("theme inheritance is deeper than 8") }
        seen.append(nameOrPath)
        let (text, origin) = try source(nameOrPath)
        let file = try Self.parse(text, origin: origin)
        let parentName = file.inherits ?? (nameOrPath == "default" && origin == "built in" ? nil : "default")
        var base: Theme
        if let p = parentName, !(p == "default" && seen.contains("default")) {
            base = try resolve(p, seen: &seen)
        } else if nameOrPath != "default", let t = builtins["default"] {
            base = try Self.build(try Self.parse(t, origin: "built in"), base: Theme(name: "base", styles: [:], glyphs: [:]), origin: "built in")
        } else {
            base = Theme(name: "base", styles: [:], glyphs: [:])
        }
        return try Self.build(file, base: base, origin: origin)
    }

    static func parse(_ text: String, origin: String) throws -> ThemeFile {
        if let f = TOMLPreflight.check(text) { throw ThemeError("\(origin): line \(f.line): \(f.message)") }
        do {
            return try TOMLDecoder().decode(ThemeFile.self, from: text)
        } catch let e as TOMLParseError {
            throw ThemeError("\(origin): line \(e.source.begin.line), column \(e.source.begin.column): \(e.description)")
        } catch {
            throw ThemeError("\(origin): \(error)")
        }
    }

    /// Applies a theme file over a resolved parent.
    static func build(_ file: ThemeFile, base: Theme, origin: String) throws -> Theme {
        if let s = file.schema, s != 1 { throw ThemeError("\(origin): schema \(s) is not supported (1 is)") }
        var theme = base
        theme.name = file.name ?? base.name
        theme.variant = file.variant ?? base.variant
        let palette = file.palette ?? [:]
        func color(_ v: ThemeFile.ColorValue, _ role: String, depth: Int = 0) throws -> ColorSpec {
            switch v {
            case .number(let n):
                guard let c = ColorSpec.parse(String(n)) else { throw ThemeError("\(origin): \(role): colour \(n) is not 0-255") }
                return c
            case .text(let s):
                if let p = palette[s], depth < 4 { return try color(p, role, depth: depth + 1) }
                guard let c = ColorSpec.parse(s) else { throw ThemeError("\(origin): \(role): unknown colour '\(s)'") }
                return c
            case .table(let rgb, let c256, let c16):
                guard let rgb, case .rgb(let r, let g, let b, _, _)? = ColorSpec.parse(rgb) else {
                    throw ThemeError("\(origin): \(role): a colour table needs rgb = \"#rrggbb\"")
                }
                return .rgb(r, g, b, c256: c256, c16: c16)
            }
        }
        func attrs(_ names: [String]?, _ role: String) throws -> Set<TextAttribute>? {
            guard let names else { return nil }
            return Set(try names.map { n in
                guard let a = TextAttribute(rawValue: n) else {
                    throw ThemeError("\(origin): \(role): unknown attribute '\(n)' (\(TextAttribute.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                return a
            })
        }
        for (role, e) in file.styles ?? [:] {
            var s = theme.styles[role] ?? Style()
            if let fg = e.fg { s.fg = try color(fg, role) }
            if let bg = e.bg { s.bg = try color(bg, role) }
            if let a = try attrs(e.attrs, role) { s.attrs = a }
            if let m = try attrs(e.mono, role) { s.mono = m }
            theme.styles[role] = s
        }
        for (name, g) in file.glyphs ?? [:] {
            guard TextWidth.of(g.utf8) == 1, TextWidth.of(g.ascii) == 1, g.ascii.unicodeScalars.allSatisfy(\.isASCII) else {
                throw ThemeError("\(origin): glyph \(name) must be one column wide, with a one-character ASCII form")
            }
            theme.glyphs[name] = Glyph(g.utf8, g.ascii)
        }
        if file.monochrome == true {
            for (k, v) in theme.styles { theme.styles[k] = Style(fg: nil, bg: nil, attrs: v.mono, mono: v.mono) }
        }
        return theme
    }

    /// Problems with a theme file (empty when it is fine): syntax, unknown colours and
    /// attributes, unknown roles and glyph names, and roles or glyphs left unresolved.
    public func check(_ nameOrPath: String) -> [String] {
        var problems: [String] = []
        do {
            let (text, origin) = try source(nameOrPath)
            let file = try Self.parse(text, origin: origin)
            for role in (file.styles ?? [:]).keys where !Theme.roles.contains(role) {
                problems.append("\(origin): unknown role '\(role)'")
            }
            for g in (file.glyphs ?? [:]).keys where !Theme.glyphNames.contains(g) {
                problems.append("\(origin): unknown glyph '\(g)'")
            }
            let theme = try load(nameOrPath)
            for g in Theme.glyphNames where theme.glyphs[g] == nil { problems.append("\(origin): glyph '\(g)' is not defined") }
            if theme.styles["ui.text"] == nil { problems.append("\(origin): role 'ui.text' is not defined") }
        } catch {
            problems.append("\(error)")
        }
        return problems
    }
}
