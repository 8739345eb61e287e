import ArgumentParser
import Foundation
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
@_spi(UbiqTools) import Ubiquity

/// `ubiq service install|uninstall|status`: the daemon as a systemd user service (started at
/// login, restarted when it fails).
struct ServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "service", abstract: "Run the daemon as a systemd user service.",
                                                    subcommands: [Install.self, Uninstall.self, Status.self], defaultSubcommand: Status.self)

    struct Install: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "install", abstract: "Write the user unit, enable it and start it.")
        @OptionGroup var home: HomeOption
        @Flag(name: .long, help: "Only write the unit file (do not call systemctl).") var noStart = false
        @Flag(name: .long, help: "Pin the binary even where other users could replace it (a folder they can write).") var force = false

        func run() async throws {
            let (h, _) = try home.config()
            let unit = ServiceUnit(home: h, explicitHome: home.home)
            let executable = ServiceUnit.executablePath()
            if !force, let open = ExecutableTrust.replaceableByOthers(executable, lasting: true) {
                throw CLIError(.invalidValue, "the ubiq binary \(executable) could be replaced by another user (\(open)); the unit would run "
                                + "their program at your login — install ubiq where only you or root can write (e.g. ~/.local/bin), or pass --force")
            }
            try unit.write(executable: executable)
            print("wrote \(unit.file.path)")
            if noStart { return }
            guard ServiceUnit.systemctlAvailable() else {
                print("systemctl --user is not available here: start the daemon with 'ubiq daemon\(unit.homeArgument)' (or run 'systemctl --user enable --now \(unit.name)' where systemd runs)")
                return
            }
            try ServiceUnit.systemctl(["daemon-reload"])
            try ServiceUnit.systemctl(["enable", "--now", unit.name])
            print("\(unit.name) enabled and started (log: \(h.logFile.path))")
        }
    }

    struct Uninstall: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "uninstall", abstract: "Stop and disable the service, and remove its unit.")
        @OptionGroup var home: HomeOption
        @Flag(name: .long, help: "Only remove the unit file (do not call systemctl).") var noStart = false

        func run() async throws {
            let unit = ServiceUnit(home: home.resolve(), explicitHome: home.home)
            if !noStart && ServiceUnit.systemctlAvailable() { try? ServiceUnit.systemctl(["disable", "--now", unit.name]) }
            guard FileManager.default.fileExists(atPath: unit.file.path) else {
                print("no service installed for this home (\(unit.file.path))")
                return
            }
            try FileManager.default.removeItem(at: unit.file)
            if !noStart && ServiceUnit.systemctlAvailable() { try? ServiceUnit.systemctl(["daemon-reload"]) }
            print("removed \(unit.file.path)")
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Whether the service is installed and the daemon answers.")
        @OptionGroup var home: HomeOption
        @Flag(name: .long, help: "Print JSON.") var json = false

        struct Report: Codable {
            var unit: String
            var unitFile: String
            var installed: Bool
            var daemonRunning: Bool
            var log: String
        }

        func run() async throws {
            let h = home.resolve()
            let unit = ServiceUnit(home: h, explicitHome: home.home)
            let running = await Ubiquity(device: h, explicitHome: home.home).daemonAnswers
            let r = Report(unit: unit.name, unitFile: unit.file.path, installed: FileManager.default.fileExists(atPath: unit.file.path),
                           daemonRunning: running, log: h.logFile.path)
            if json { return try printJSON(r) }
            print("\(r.unit): \(r.installed ? "installed (\(r.unitFile))" : "not installed ('ubiq service install' installs it)")")
            print("daemon: \(r.daemonRunning ? "running" : "not running")")
            print("log: \(r.log)")
        }
    }
}

/// The systemd user unit of a home's daemon.
struct ServiceUnit {
    let home: DeviceHome
    /// `--home` as given (the unit passes it on); nil: the standard home.
    let explicitHome: String?

    /// `ubiq.service` for the standard home, `ubiq-<8 hex>.service` for another.
    var name: String {
        guard let explicitHome else { return "ubiq.service" }
        let path = URL(fileURLWithPath: explicitHome).standardizedFileURL.path
        return "ubiq-\(ContentHash.of(Array(path.utf8)).hex.prefix(8)).service"
    }

    var homeArgument: String {
        explicitHome.map { " --home '\(URL(fileURLWithPath: $0).standardizedFileURL.path)'" } ?? ""
    }

    /// `$XDG_CONFIG_HOME/systemd/user/NAME` (else `~/.config/systemd/user/NAME`).
    var file: URL {
        let env = ProcessInfo.processInfo.environment
        let config = env["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
            ?? URL(fileURLWithPath: env["HOME"] ?? NSHomeDirectory()).appendingPathComponent(".config")
        return config.appendingPathComponent("systemd/user").appendingPathComponent(name)
    }

    /// The unit; throws `invalid_value` for a path systemd cannot be handed (a control character).
    func text(executable: String) throws -> String {
        let homePath = explicitHome.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        let exec = try [Self.execArgument(executable), "daemon"] + (homePath.map { ["--home", try Self.execArgument($0)] } ?? [])
        let description = try homePath.map { " (\(try Self.settingValue($0)))" } ?? ""
        return """
        [Unit]
        Description=Ubiquity sync daemon\(description)
        After=network-online.target

        [Service]
        ExecStart=\(exec.joined(separator: " "))
        Restart=on-failure
        RestartSec=5

        [Install]
        WantedBy=default.target

        """
    }

    func write(executable: String) throws {
        let text = try text(executable: executable)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file, options: .atomic)
    }

    /// One argument of `ExecStart` as systemd reads it back exactly (#45 row 5): in double
    /// quotes, `\` and `"` escaped with a backslash, `%` (a specifier) doubled, `$` (a variable)
    /// doubled. A control character (a newline would end the setting) is refused.
    static func execArgument(_ s: String) throws -> String {
        try refuseControlCharacters(s)
        var out = "\""
        for ch in s.unicodeScalars {
            switch ch {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "%": out += "%%"
            case "$": out += "$$"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out + "\""
    }

    /// A value of a plain setting (`Description=`): specifiers expanded there too, so `%` doubled;
    /// a control character refused.
    static func settingValue(_ s: String) throws -> String {
        try refuseControlCharacters(s)
        return s.replacingOccurrences(of: "%", with: "%%")
    }

    static func refuseControlCharacters(_ s: String) throws {
        if let bad = s.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw CLIError(.invalidValue, "a systemd unit cannot name \(s.debugDescription): it holds the control character U+\(String(format: "%04X", bad.value))")
        }
    }

    /// This program's absolute path.
    static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Whether a user systemd answers here.
    static func systemctlAvailable() -> Bool {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemctl") || FileManager.default.isExecutableFile(atPath: "/bin/systemctl") else { return false }
        return (try? run(["--user", "show-environment"], quiet: true)) == 0  // answers only when a user manager runs
    }

    static func systemctl(_ args: [String]) throws {
        try run(["--user"] + args, quiet: false)
    }

    @discardableResult
    static func run(_ args: [String], quiet: Bool) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemctl") ? "/usr/bin/systemctl" : "/bin/systemctl")
        p.arguments = args
        if quiet { p.standardOutput = FileHandle.nullDevice; p.standardError = FileHandle.nullDevice }
        try p.run()
        p.waitUntilExit()
        guard quiet || p.terminationStatus == 0 else { throw CLIError(.internalError, "systemctl \(args.joined(separator: " ")) failed (status \(p.terminationStatus))") }
        return p.terminationStatus
    }
}
