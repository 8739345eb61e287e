import Foundation
import TOMLKit

/// `$XDG_CONFIG_HOME/ubiquity/config.toml` (else `~/.config/ubiquity/config.toml`): a person's
/// defaults for the command line and the front end. Every key is optional; a flag beats the
/// environment, which beats this file, which beats the built-in default (tui.md §1).
///
/// ```toml
/// theme = "dark"            # a theme name or .toml path
/// color = "auto"            # auto, always, never
/// ascii = false             # ASCII glyphs
/// sort = "name"             # the Files view's order: name, size, modified, status
/// show-hidden = false       # dotfiles in the Files view
/// download = "all"          # `ubiq login`'s default: all, on-demand
/// log-level = "info"        # trace, debug, info, notice, warning, error, critical
/// ```
public struct UserConfig: Sendable, Equatable {
    public var theme: String?
    public var color: String?
    public var ascii: Bool?
    public var sort: String?
    public var showHidden: Bool?
    public var download: String?
    public var logLevel: String?
    /// Programs using the library start the daemon when none runs.
    public var autostart: Bool?
    public init() {}

    /// Every key, with the values each takes (nil: any text).
    public static let keys: [(name: String, values: [String]?)] = [
        ("theme", nil), ("color", ["auto", "always", "never"]), ("ascii", ["true", "false"]), ("sort", ["name", "size", "modified", "status"]),
        ("show-hidden", ["true", "false"]), ("download", ["all", "on-demand"]),
        ("log-level", ["trace", "debug", "info", "notice", "warning", "error", "critical"]), ("autostart", ["true", "false"]),
    ]

    /// Where the file is for this environment.
    public static func path(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
            ?? URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory()).appendingPathComponent(".config")
        return base.appendingPathComponent("ubiquity/config.toml")
    }

    /// The file's settings: empty when there is none; a `ConfigError` naming the line (and
    /// column, when the TOML library knows it) when it is broken.
    public static func load(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> UserConfig {
        let url = path(environment: environment)
        guard FileManager.default.fileExists(atPath: url.path) else { return UserConfig() }
        let attrs = try? FileManager.default.attributesOfItem(atPath: url.path)
        guard ((attrs?[.size] as? NSNumber)?.intValue ?? 0) <= 64 << 10 else { throw ConfigError("\(url.path): larger than 64 KiB") }
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { throw ConfigError("\(url.path): cannot be read as UTF-8 text") }
        return try parse(text, origin: url.path)
    }

    /// Parses a config file's text (see the type's example).
    public static func parse(_ text: String, origin: String) throws -> UserConfig {
        // The TOML library aborts the process on some damaged input: a strict check first.
        if let f = TOMLPreflight.check(text) { throw ConfigError("\(origin): line \(f.line): \(f.message)") }
        let table: TOMLTable
        do { table = try TOMLTable(string: text) } catch let e as TOMLParseError {
            throw ConfigError("\(origin): line \(e.source.begin.line), column \(e.source.begin.column): \(e.description)")
        }
        func line(of key: String) -> Int {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            return (lines.firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix(key) } ?? 0) + 1
        }
        var c = UserConfig()
        for key in table.keys.sorted() {
            let value = table[key]!
            guard let spec = keys.first(where: { $0.name == key }) else {
                throw ConfigError("\(origin): line \(line(of: key)): unknown setting '\(key)' (known: \(keys.map(\.name).joined(separator: ", ")))")
            }
            let text: String
            if let b = value.bool { text = b ? "true" : "false" } else if let s = value.string { text = s } else {
                throw ConfigError("\(origin): line \(line(of: key)): \(key) must be \(spec.values == ["true", "false"] ? "true or false" : "a string")")
            }
            if let allowed = spec.values, !allowed.contains(text) {
                throw ConfigError("\(origin): line \(line(of: key)): \(key) must be one of \(allowed.joined(separator: ", ")), not '\(text)'")
            }
            if spec.values == ["true", "false"], value.bool == nil {
                throw ConfigError("\(origin): line \(line(of: key)): \(key) must be true or false (no quotes)")
            }
            switch key {
            case "theme": c.theme = text
            case "color": c.color = text
            case "ascii": c.ascii = text == "true"
            case "sort": c.sort = text
            case "show-hidden": c.showHidden = text == "true"
            case "download": c.download = text
            case "autostart": c.autostart = text == "true"
            default: c.logLevel = text
            }
        }
        return c
    }
}

/// A config file that cannot be used: one line naming the file, the line and what is wrong.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
