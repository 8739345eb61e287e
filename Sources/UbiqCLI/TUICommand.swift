import ArgumentParser
import Foundation
import Logging
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
@_spi(UbiqTools) import Ubiquity
import UbiqTUI
#if canImport(Glibc)
import Glibc
#endif

/// Options shared by `ubiq tui` and `ubiq demo`: theme, colour and glyphs.
struct LookOptions: ParsableArguments {
    @Option(name: .long, help: "Theme name or .toml path (default: $UBIQ_THEME, else config.toml's, else 'default'; see 'ubiq themes list').") var theme: String?
    @Option(name: .long, help: "auto, always or never (default: never if NO_COLOR is set, else config.toml's, else auto).") var color: String?
    @Flag(name: .long, help: "ASCII glyphs instead of UTF-8 symbols.") var ascii = false

    func validate() throws {
        if let color, !["auto", "always", "never"].contains(color) { throw ValidationError("--color must be auto, always or never") }
    }

    /// The theme to use and a warning when the chosen one could not be loaded.
    func resolve(_ settings: EffectiveSettings) -> (Theme, String?) {
        let loader = ThemeLoader.standard()
        let wanted = settings.theme(flag: theme).0
        do { return (try loader.load(wanted), nil) } catch {
            let fallback = (try? loader.load("default")) ?? Theme(name: "fallback", styles: ["ui.text": Style()], glyphs: [:])
            // The reason first (the status line is short); the whole message goes to the log.
            let reason = (error as? ThemeError)?.reason ?? "\(error)"
            return (fallback, "theme '\(wanted)': \(reason) (default used; any key clears)")
        }
    }

    /// Colour unless `never` applies (auto draws colour when the terminal has it).
    func wantColor(_ settings: EffectiveSettings) -> Bool { settings.color(flag: color).0 != "never" }

    func asciiGlyphs(_ settings: EffectiveSettings) -> Bool { settings.ascii(flag: ascii).0 }
}

/// `ubiq tui [--theme NAME]`
struct TUICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tui", abstract: "The interactive front end (attaches to a running daemon, or runs the engine itself while open).")
    @OptionGroup var look: LookOptions
    @OptionGroup var home: HomeOption

    func run() async throws {
        guard isatty(0) != 0, isatty(1) != 0 else { throw CLIError(.invalidRequest, "ubiq tui needs a terminal") }
        let h = home.resolve()
        guard let config = try DeviceConfig.load(h) else {
            throw CLIError(.unauthorized, "not signed in: run 'ubiq login URL --user NAME' first, or try 'ubiq demo'")
        }
        let settings = try EffectiveSettings.load()
        let (theme, warning) = look.resolve(settings)
        var logger = Logger(label: "ubiq.tui") { FileLogHandler(label: $0, url: h.logFile) }
        logger.logLevel = settings.logLevel().0
        guard let lock = try HomeLock.acquire(h) else {
            // A daemon runs this home's engine: attach to it through its socket.
            guard try await DaemonAnswer.ask(h, explicitHome: home.home, .status).status != nil else {
                throw CLIError(.invalidRequest, "the daemon answered without a status")
            }
            let app = await TUIApp(connection: .daemon(Ubiquity(device: h, explicitHome: home.home)), theme: theme, ascii: look.asciiGlyphs(settings), wantColor: look.wantColor(settings), logger: logger)
            await app.useDefaults(sort: settings.sort.0, showHidden: settings.showHidden.0, themeSource: settings.theme(flag: look.theme).0)
            await app.run(flash: warning)
            return
        }
        // No daemon: the front end runs the engine itself (and answers other commands meanwhile).
        let devices = try DeviceRuntimes(home: h, config: config, logger: logger)
        let socket = DaemonSocket(path: h.socketPath) { req, container, emit in await devices.handle(req, container: container, emit: emit) }
        try? await socket.start()
        await devices.start()
        let app = await TUIApp(connection: .local(devices), theme: theme, ascii: look.asciiGlyphs(settings), wantColor: look.wantColor(settings), logger: logger)
        await app.useDefaults(sort: settings.sort.0, showHidden: settings.showHidden.0, themeSource: settings.theme(flag: look.theme).0)
        await app.run(flash: warning)
        socket.stop()
        await devices.stop()
        withExtendedLifetime(lock) {}
    }
}

/// `ubiq themes list|check|show`
struct ThemesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "themes", abstract: "Front-end colour themes.",
                                                    subcommands: [List.self, Check.self, Show.self], defaultSubcommand: List.self)

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "A theme as resolved: every role's colours and attributes, every glyph.")
        @Argument(help: "A theme name or .toml path.") var theme: String
        func run() async throws {
            let loader = ThemeLoader.standard()
            let t: Theme
            do { t = try loader.load(theme) } catch { throw CLIError(.invalidValue, "\(error)") }
            for line in t.listing { print(line) }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Every theme found and where it comes from.")
        func run() async throws {
            for t in ThemeLoader.standard().available() { print("\(t.name.padding(toLength: 14, withPad: " ", startingAt: 0)) \(t.source)") }
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "check", abstract: "Validate themes (all when none is named); exit 1 on problems.")
        @Argument(help: "Theme names or .toml paths.") var themes: [String] = []
        func run() async throws {
            let loader = ThemeLoader.standard()
            let names = themes.isEmpty ? loader.available().map(\.name) : themes
            var bad = 0
            for n in names {
                let problems = loader.check(n)
                if problems.isEmpty { print("ok     \(n)") } else {
                    bad += 1
                    for p in problems { print("error  \(n): \(p)") }
                }
            }
            if bad > 0 { throw CLIError(.invalidValue, "\(Counted.of(bad, "theme")) \(bad == 1 ? "has" : "have") problems") }
        }
    }
}
