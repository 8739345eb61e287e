import ArgumentParser
import Foundation
import Logging
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
import UbiqServer
import UbiqTUI
#if canImport(Glibc)
import Glibc
#endif

/// `ubiq demo`: everything from nothing: an embedded server on a free loopback port with a
/// temporary data folder, an account, two devices in temporary homes, sample documents and
/// settings, a second device that keeps working (adds, edits, changes a setting, makes a
/// conflict), and the front end on the first device. Quitting removes it all.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "demo", abstract: "A live demonstration with nothing set up (quit with q).")
    @OptionGroup var look: LookOptions
    @Option(name: .long, help: "Seconds between the second device's steps.") var pace: Double = 5

    func run() async throws {
        guard isatty(0) != 0, isatty(1) != 0 else { throw CLIError(.invalidRequest, "ubiq demo needs a terminal") }
        // Setting up takes seconds in a debug build (what `swift run` gives: password hashing
        // for three sign-ins, two engines): the screen says so instead of staying blank.
        print("ubiq demo: starting an embedded server and two devices (a few seconds)…")
        fflush(nil)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ubiq-demo-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: dir) }
        let logURL = dir.appendingPathComponent("demo.log")
        var logger = Logger(label: "ubiq.demo") { FileLogHandler(label: $0, url: logURL) }
        let settings = try EffectiveSettings.load()
        logger.logLevel = settings.logLevel().0

        let services = try await ServerServices.embedded(at: dir.appendingPathComponent("server"))
        let password = UUID().uuidString
        try await services.addUser(name: "demo", password: password, quota: 1 << 30)
        let server = try await EmbeddedServer.start(services: services, logger: logger)
        let laptop = try await Self.device("laptop", dir: dir, server: server, password: password, logger: logger)
        let desktop = try await Self.device("desktop", dir: dir, server: server, password: password, logger: logger)
        try await DemoScript.seed(desktop)
        await desktop.start()
        await laptop.start()

        let (theme, warning) = look.resolve(settings)
        let app = await TUIApp(connection: .local(laptop), theme: theme, ascii: look.asciiGlyphs(settings), wantColor: look.wantColor(settings), logger: logger)
        await app.useDefaults(sort: settings.sort.0, showHidden: settings.showHidden.0, themeSource: settings.theme(flag: look.theme).0)
        await MainActor.run { app.asksBeforeQuitting = false }  // the demo's folders go with it
        let script = Task { await DemoScript(laptop: laptop, desktop: desktop, app: app, pace: pace).run() }
        await app.run(flash: warning ?? "Enter opens Documents, ? helps ('desktop' is at work)")
        script.cancel()
        await laptop.stop()
        await desktop.stop()
        await server.stop()
        print("demo finished; its server, devices and files were removed")
    }

    static func device(_ name: String, dir: URL, server: EmbeddedServer, password: String, logger: Logger) async throws -> DeviceRuntime {
        let home = DeviceHome.rooted(at: dir.appendingPathComponent(name))
        let (_, r) = try await UbiqAPIClient(baseURL: server.url).login(user: "demo", password: password, deviceName: name)
        let config = DeviceConfig(server: server.url, user: "demo", deviceID: r.deviceID, deviceName: name, container: DeviceConfig.defaultContainer,
                                  download: .all, token: r.token)
        try config.save(home)
        return try DeviceRuntime(home: home, config: config, logger: logger, settleTime: .milliseconds(500))
    }
}

/// What the demo's second device does.
struct DemoScript: Sendable {
    let laptop: DeviceRuntime
    let desktop: DeviceRuntime
    let app: TUIApp
    let pace: Double

    static func write(_ d: DeviceRuntime, _ path: String, _ text: String) throws { try write(d, path, bytes: Array(text.utf8)) }

    static func write(_ d: DeviceRuntime, _ path: String, bytes: [UInt8]) throws {
        let url = d.engine.folder.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
    }

    /// Sample documents and settings, made on the desktop before anything runs.
    static func seed(_ d: DeviceRuntime) async throws {
        try write(d, "Documents/Welcome.txt", """
            Welcome to Ubiquity.

            This folder is synced between two devices of the account 'demo':
            this laptop (where the front end runs) and a desktop working in the background.
            Press ? for help, 2 for conflicts, 3 for settings, q to quit.

            """)
        try write(d, "Documents/Shared plan.txt", "Plan for the week\n- Monday: write the report\n- Tuesday: review\n")
        try write(d, "Documents/Notes/Groceries.md", "# Groceries\n- bread\n- milk\n- coffee\n")
        try write(d, "Documents/Notes/日本語のメモ.txt", "東京で会議。資料を忘れないこと。\n")
        try write(d, "Documents/Notes/Party 🎉 ideas.md", "- balloons\n- cake\n")
        var rng = SystemRandomNumberGenerator()
        try write(d, "Documents/Photos/holiday.raw", bytes: (0..<(6 << 20)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        try await d.kv.setValues([
            "theme": .string("dark"), "fontSize": .int(14), "autoSave": .bool(true), "zoom": .double(1.25),
            "recentFiles": .array([.string("Welcome.txt"), .string("Shared plan.txt")]),
            "lastOpened": .date(KVDateFormat.roundedToMillis(Date())),
        ])
    }

    func say(_ text: String) async { await app.notify(text) }

    func step() async -> Bool {
        try? await Task.sleep(for: .seconds(pace))
        return !Task.isCancelled
    }

    func run() async {
        do {
            guard await step() else { return }
            try Self.write(desktop, "Documents/From the desktop.txt", "Written on the desktop at \(KVDateFormat.format(Date())).\n")
            await say("desktop added 'From the desktop.txt'")
            guard await step() else { return }
            let welcome = desktop.engine.folder.appendingPathComponent("Documents/Welcome.txt")
            let h = try FileHandle(forWritingTo: welcome)
            try h.seekToEnd()
            try h.write(contentsOf: Data("(The desktop added this line at \(KVDateFormat.format(Date())).)\n".utf8))
            try h.close()
            await say("desktop edited 'Welcome.txt'")
            guard await step() else { return }
            try await desktop.kv.set(.int(16), forKey: "fontSize")
            await desktop.kv.synchronize()
            await say("press 3: desktop set 'fontSize' to 16")
            guard await step() else { return }
            // Both devices edit the same document at the same moment: one version becomes a conflict.
            try Self.write(desktop, "Documents/Shared plan.txt", "Plan for the week\n- Monday: write the report (desktop: moved to 9:00)\n- Tuesday: review\n- Friday: demo\n")
            try Self.write(laptop, "Documents/Shared plan.txt", "Plan for the week\n- Monday: write the report\n- Tuesday: review with Ana\n")
            await say("press 2, Enter: 'Shared plan.txt' conflicts")
            var n = 0
            while await step() {
                n += 1
                let log = desktop.engine.folder.appendingPathComponent("Documents/Notes/Activity.md")
                if !FileManager.default.fileExists(atPath: log.path) { try Self.write(desktop, "Documents/Notes/Activity.md", "# Activity\n") }
                let lh = try FileHandle(forWritingTo: log)
                try lh.seekToEnd()
                try lh.write(contentsOf: Data("- \(KVDateFormat.format(Date())): desktop still working (\(n))\n".utf8))
                try lh.close()
                try await desktop.kv.set(.date(KVDateFormat.roundedToMillis(Date())), forKey: "lastSeen")
                await desktop.kv.synchronize()
            }
        } catch {
            await say("the demo's second device stopped: \(error)")
        }
    }
}
