import Foundation
import TOMLKit

/// A theme that cannot be used: the message names the theme and, for syntax errors, the line.
public struct ThemeError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, without where (a short line for the front end's status line).
    public let reason: String
    /// The file or built-in theme it is wrong in, when known.
    public let origin: String?
    public init(_ reason: String, origin: String? = nil) { self.reason = reason; self.origin = origin }
    public var message: String { origin.map { "\($0): \(reason)" } ?? reason }
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
        return try Self.build(file, base: try parent(of: file, nameOrPath, origin: origin, seen: &seen), origin: origin)
    }

    /// The resolved theme a file applies over: what it inherits, else the default.
    func parent(of file: ThemeFile, _ nameOrPath: String, origin: String, seen: inout [String]) throws -> Theme {
        let parentName = file.inherits ?? (nameOrPath == "default" && origin == "built in" ? nil : "default")
        if let p = parentName, !(p == "default" && seen.contains("default")) {
            return try resolve(p, seen: &seen)
        } else if nameOrPath != "default", let t = builtins["default"] {
            return try Self.build(try Self.parse(t, origin: "built in"), base: Theme(name: "base", styles: [:], glyphs: [:]), origin: "built in")
        }
        return Theme(name: "base", styles: [:], glyphs: [:])
    }

    static func parse(_ text: String, origin: String) throws -> ThemeFile {
        if let f = TOMLPreflight.check(text) { throw ThemeError("line \(f.line): \(f.message)", origin: origin) }
        do {
            return try TOMLDecoder().decode(ThemeFile.self, from: text)
        } catch let e as TOMLParseError {
            throw ThemeError("line \(e.source.begin.line), column \(e.source.begin.column): \(e.description)", origin: origin)
        } catch {
            throw ThemeError("\(error)", origin: origin)
        }
    }

    /// Applies a theme file over a resolved parent; throws every problem found (one message).
    static func build(_ file: ThemeFile, base: Theme, origin: String) throws -> Theme {
        var problems: [String] = []
        let theme = build(file, base: base, problems: &problems)
        guard problems.isEmpty else { throw ThemeError(problems.joined(separator: "; "), origin: origin) }
        return theme
    }

    /// Applies a theme file over a resolved parent, noting each problem (in file order of roles
    /// and glyphs, sorted by name: the same list on every run) instead of stopping at the first.
    static func build(_ file: ThemeFile, base: Theme, problems: inout [String]) -> Theme {
        if let s = file.schema, s != 1 { problems.append("schema \(s) is not supported (1 is)") }
        var theme = base
        theme.name = file.name ?? base.name
        theme.variant = file.variant ?? base.variant
        let palette = file.palette ?? [:]
        func color(_ v: ThemeFile.ColorValue, _ role: String, depth: Int = 0) -> Result<ColorSpec, ThemeError> {
            switch v {
            case .number(let n):
                guard let c = ColorSpec.parse(String(n)) else { return .failure(ThemeError("\(role): colour \(n) is not 0-255")) }
                return .success(c)
            case .text(let s):
                if let p = palette[s], depth < 4 { return color(p, role, depth: depth + 1) }
                guard let c = ColorSpec.parse(s) else { return .failure(ThemeError("\(role): unknown colour '\(s)'")) }
                return .success(c)
            case .table(let rgb, let c256, let c16):
                guard let rgb, case .rgb(let r, let g, let b, _, _)? = ColorSpec.parse(rgb) else {
                    return .failure(ThemeError("\(role): a colour table needs rgb = \"#rrggbb\""))
                }
                if let c256, !(0...255).contains(c256) { return .failure(ThemeError("\(role): c256 \(c256) is not 0-255")) }
                if let c16, !(0...15).contains(c16) { return .failure(ThemeError("\(role): c16 \(c16) is not 0-15")) }
                return .success(.rgb(r, g, b, c256: c256, c16: c16))
            }
        }
        func note<T>(_ r: Result<T, ThemeError>) -> T? {
            switch r {
            case .success(let v): return v
            case .failure(let e): problems.append(e.message); return nil
            }
        }
        func attrs(_ names: [String]?, _ role: String) -> Set<TextAttribute>? {
            guard let names else { return nil }
            var out = Set<TextAttribute>()
            for n in names {
                if let a = TextAttribute(rawValue: n) { out.insert(a); continue }
                problems.append("\(role): unknown attribute '\(n)' (\(TextAttribute.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            return out
        }
        // Every palette entry, used or not (a bad one would otherwise wait for its first use).
        for (name, v) in palette.sorted(by: { $0.key < $1.key }) { _ = note(color(v, "palette '\(name)'")) }
        for (role, e) in (file.styles ?? [:]).sorted(by: { $0.key < $1.key }) {
            var s = theme.styles[role] ?? Style()
            if let fg = e.fg, let c = note(color(fg, role)) { s.fg = c }
            if let bg = e.bg, let c = note(color(bg, role)) { s.bg = c }
            if let a = attrs(e.attrs, role) { s.attrs = a }
            if let m = attrs(e.mono, role) { s.mono = m }
            theme.styles[role] = s
        }
        for (name, g) in (file.glyphs ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard TextWidth.of(g.utf8) == 1, TextWidth.of(g.ascii) == 1, g.ascii.unicodeScalars.allSatisfy(\.isASCII) else {
                problems.append("glyph \(name) must be one column wide, with a one-character ASCII form")
                continue
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
            for role in (file.styles ?? [:]).keys.sorted() where !Theme.roles.contains(role) {
                problems.append("unknown role '\(role)'")
            }
            for g in (file.glyphs ?? [:]).keys.sorted() where !Theme.glyphNames.contains(g) {
                problems.append("unknown glyph '\(g)'")
            }
            // The parent resolved as usual (its problems are its own); this file's all noted.
            var seen = [nameOrPath]
            let theme = Self.build(file, base: try parent(of: file, nameOrPath, origin: origin, seen: &seen), problems: &problems)
            for g in Theme.glyphNames where theme.glyphs[g] == nil { problems.append("glyph '\(g)' is not defined") }
            if theme.styles["ui.text"] == nil { problems.append("role 'ui.text' is not defined") }
        } catch {
            problems.append("\(error)")
        }
        return problems
    }
}
