import ArgumentParser
import Foundation
import Logging
import UbiqTUI

/// The settings that apply, each with where it came from: a flag beats the environment, which
/// beats `config.toml`, which beats the default (tui.md §1).
struct EffectiveSettings {
    enum Source: String { case flag, environment, config, `default` }
    let file: UserConfig
    let environment: [String: String]

    /// The config file (a broken one is one clear line naming where).
    static func load(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> EffectiveSettings {
        do { return EffectiveSettings(file: try UserConfig.load(environment: environment), environment: environment) } catch let e as ConfigError {
            throw CLIError(.invalidValue, e.message)
        }
    }

    func env(_ key: String) -> String? { environment[key].flatMap { $0.isEmpty ? nil : $0 } }

    func theme(flag: String?) -> (String, Source) {
        if let flag { return (flag, .flag) }
        if let e = env("UBIQ_THEME") { return (e, .environment) }
        return file.theme.map { ($0, .config) } ?? ("default", .default)
    }

    func color(flag: String?) -> (String, Source) {
        if let flag { return (flag, .flag) }
        if env("NO_COLOR") != nil { return ("never", .environment) }
        return file.color.map { ($0, .config) } ?? ("auto", .default)
    }

    func ascii(flag: Bool) -> (Bool, Source) {
        if flag { return (true, .flag) }
        if env("UBIQ_ASCII") == "1" { return (true, .environment) }
        let locale = env("LC_ALL") ?? env("LC_CTYPE") ?? env("LANG") ?? ""
        if !locale.isEmpty && !locale.lowercased().contains("utf") { return (true, .environment) }
        return file.ascii.map { ($0, .config) } ?? (false, .default)
    }

    func download(flag: String?) -> (String, Source) {
        if let flag { return (flag, .flag) }
        return file.download.map { ($0, .config) } ?? ("all", .default)
    }

    func logLevel() -> (Logger.Level, Source) {
        if let e = env("UBIQ_LOG_LEVEL"), let l = Logger.Level(rawValue: e) { return (l, .environment) }
        return file.logLevel.flatMap(Logger.Level.init(rawValue:)).map { ($0, .config) } ?? (.info, .default)
    }

    var sort: (String, Source) { file.sort.map { ($0, .config) } ?? ("name", .default) }
    var showHidden: (Bool, Source) { file.showHidden.map { ($0, .config) } ?? (false, .default) }
    var autostart: (Bool, Source) { file.autostart.map { ($0, .config) } ?? (false, .default) }
}

/// `ubiq config show`
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "config", abstract: "Your defaults in config.toml, and what applies.",
                                                    subcommands: [Show.self], defaultSubcommand: Show.self)

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Each setting that applies and where it comes from (environment, config file, default).")
        func run() async throws {
            print("# \(UserConfig.path().path)\(FileManager.default.fileExists(atPath: UserConfig.path().path) ? "" : " (none: defaults apply)")")
            let s = try EffectiveSettings.load()
            let rows: [(String, String, EffectiveSettings.Source)] = [
                ("theme", s.theme(flag: nil).0, s.theme(flag: nil).1), ("color", s.color(flag: nil).0, s.color(flag: nil).1),
                ("ascii", "\(s.ascii(flag: false).0)", s.ascii(flag: false).1), ("sort", s.sort.0, s.sort.1),
                ("show-hidden", "\(s.showHidden.0)", s.showHidden.1), ("download", s.download(flag: nil).0, s.download(flag: nil).1),
                ("log-level", s.logLevel().0.rawValue, s.logLevel().1), ("autostart", "\(s.autostart.0)", s.autostart.1),
            ]
            for (k, v, src) in rows {
                let shown = v == "true" || v == "false" ? v : "\"\(v)\""
                print("\(k) = \(shown)".padding(toLength: 32, withPad: " ", startingAt: 0) + "# \(src.rawValue)")
            }
        }
    }
}
