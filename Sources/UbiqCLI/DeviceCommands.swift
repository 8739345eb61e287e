import ArgumentParser
import Foundation
import Logging
import UbiqClient
import UbiqCore
import UbiqEngine
#if canImport(Glibc)
import Glibc
#endif

/// `ubiq login URL --user NAME …`
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "login", abstract: "Bind this home to an account and a container.")

    @Argument(help: "Server URL, e.g. http://127.0.0.1:8737") var url: String
    @Option(name: .long, help: "Account name.") var user: String
    @Flag(name: .long, help: "Read the password from the first line of standard input.") var passwordStdin = false
    @Option(name: .long, help: "This device's name (default: the host name).") var device: String?
    @Option(name: .long, help: "Container ID (default: iCloud.default).") var container: String?
    @Option(name: .long, help: "all (keep every file's content) or on-demand.") var download: String = "all"
    @OptionGroup var home: HomeOption

    func validate() throws {
        guard url.hasPrefix("http://") || url.hasPrefix("https://"), URL(string: url)?.host != nil else {
            throw ValidationError("the server URL must look like http://HOST:PORT")
        }
        guard DeviceConfig.DownloadPolicy(rawValue: download) != nil else { throw ValidationError("--download must be 'all' or 'on-demand'") }
        if let container { do { _ = try ContainerID(validating: container) } catch let e as CoreError { throw ValidationError(e.message) } }
    }

    func run() async throws {
        let h = home.resolve()
        let containerID = try container.map(ContainerID.init(validating:)) ?? DeviceConfig.defaultContainer
        let previous = try? DeviceConfig.load(h)
        if let previous, previous.user != user || previous.server != url || previous.container != containerID {
            throw CLIError(.invalidRequest, "this home is signed in as \(previous.user) at \(previous.server); run 'ubiq logout' first")
        }
        let password: String
        if passwordStdin {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw CLIError(.invalidValue, "no password on standard input") }
            password = line
        } else if isatty(0) != 0, let p = getpass("Password for \(user): ") {
            password = String(cString: p)
        } else {
            throw CLIError(.invalidValue, "no terminal to ask for the password; use --password-stdin")
        }
        let deviceName = device ?? ProcessInfo.processInfo.hostName
        let base = url.hasSuffix("/") ? String(url.dropLast()) : url
        let (_, r) = try await mapClient { try await UbiqAPIClient(baseURL: base).login(user: user, password: password, deviceName: deviceName, deviceID: previous?.deviceID) }
        let config = DeviceConfig(server: base, user: r.user, deviceID: r.deviceID, deviceName: r.deviceName, container: containerID,
                                  download: DeviceConfig.DownloadPolicy(rawValue: download)!, token: r.token)
        try config.save(h)
        try FileManager.default.createDirectory(at: h.containerFolder(containerID).appendingPathComponent("Documents"), withIntermediateDirectories: true)
        print("signed in to \(base) as \(r.user) (device \(r.deviceName)); folder \(h.containerFolder(containerID).path)")
    }
}

/// Maps client errors to one-line CLI errors.
func mapClient<T>(_ body: () async throws -> T) async throws -> T {
    do { return try await body() } catch let e as ClientError {
        throw CLIError(e.code, e.code == .serverUnreachable ? "cannot reach the server: \(e.message)" : e.message)
    }
}

/// `ubiq logout [--force]`
struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "logout", abstract: "Sign this home out of its account.")

    @Flag(name: .long, help: "Sign out even with changes not yet uploaded (they are first copied to a folder outside the container).")
    var force = false
    @OptionGroup var home: HomeOption

    func run() async throws {
        let (h, config) = try home.config()
        guard let lock = try HomeLock.acquire(h) else { throw CLIError(.invalidRequest, "a daemon is running for this home; stop it first") }
        let engine = try SyncEngine(home: h, config: config)
        let pending = await engine.unsyncedLocalPaths()
        var rescued: URL?
        if !pending.isEmpty {
            guard force else {
                throw CLIError(.invalidRequest, "\(pending.count) local change(s) not uploaded yet (e.g. \(pending[0])); run 'ubiq sync' or use --force")
            }
            rescued = try await engine.rescue(pending)
        }
        try? await UbiqAPIClient(baseURL: config.server, token: config.token).revoke()
        try FileManager.default.removeItem(at: h.configFile)
        try? FileManager.default.removeItem(at: h.stateDatabase(config.container))
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: h.stateDatabase(config.container).path + "-wal"))
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: h.stateDatabase(config.container).path + "-shm"))
        try? FileManager.default.removeItem(at: h.partialFolder(config.container))
        _ = lock
        if let rescued { print("unsynced changes copied to \(rescued.path)") }
        print("signed out of \(config.server) (\(config.user))")
    }
}

/// `ubiq daemon`
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "daemon", abstract: "Run the sync engine in the foreground until stopped.")
    @OptionGroup var home: HomeOption

    func run() async throws {
        let (h, config) = try home.config()
        guard let lock = try HomeLock.acquire(h) else { throw CLIError(.invalidRequest, "another engine is already running for this home") }
        var logger = Logger(label: "ubiq.daemon")
        logger.logLevel = .info
        let engine = try SyncEngine(home: h, config: config, logger: logger)
        let socket = DaemonSocket(path: h.socketPath) { req in
            switch req.command {
            case "status": return DaemonResponse(ok: true, status: await engine.status())
            case "sync":
                await engine.syncNow()
                let s = await engine.status()
                return DaemonResponse(ok: s.idle, message: s.idle ? nil : SyncCommand.describe(s), status: s)
            default: return DaemonResponse(ok: false, message: "unknown command \(req.command)")
            }
        }
        try socket.start()
        await engine.start()
        print("ubiq daemon: syncing \(engine.folder.path) with \(config.server) as \(config.user)")
        fflush(nil)
        // Run until SIGTERM or SIGINT.
        await SignalWaiter.waitForTermination()
        await engine.stop()
        socket.stop()
        _ = lock
    }
}

/// `ubiq sync`
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sync", abstract: "One full pass; exit 0 when in sync.")
    @OptionGroup var home: HomeOption

    static func describe(_ s: EngineStatus) -> String {
        if s.state == .offline { return "offline: \(s.lastError ?? "cannot reach the server")" }
        let n = s.uploads.queued + s.uploads.running + s.downloads.queued + s.downloads.running
        return n > 0 ? "not in sync: \(n) transfer(s) left" : "not in sync yet: \(s.lastError ?? "changes still settling")"
    }

    func run() async throws {
        let (h, config) = try home.config()
        guard let lock = try HomeLock.acquire(h) else {
            guard let r = DaemonSocket.ask(h.socketPath, DaemonRequest(command: "sync")) else {
                throw CLIError(.invalidRequest, "another engine holds this home but does not answer")
            }
            if !r.ok { throw CLIError(.invalidRequest, r.message ?? "not in sync") }
            print("in sync")
            return
        }
        let engine = try SyncEngine(home: h, config: config, settleTime: .milliseconds(500))
        for _ in 0..<20 {
            await engine.syncNow()
            let s = await engine.status()
            if s.idle { print("in sync"); _ = lock; return }
            if s.state == .offline { throw CLIError(.serverUnreachable, SyncCommand.describe(s)) }
            try await Task.sleep(for: .milliseconds(300))
        }
        throw CLIError(.invalidRequest, SyncCommand.describe(await engine.status()))
    }
}

/// `ubiq status [--json]`
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Account, server, connection state, transfers, conflicts.")
    @Flag(name: .long, help: "Print one JSON document.") var json = false
    @OptionGroup var home: HomeOption

    func run() async throws {
        let h = home.resolve()
        let status: EngineStatus
        if let config = try DeviceConfig.load(h) {
            if let lock = try HomeLock.acquire(h) {
                let engine = try SyncEngine(home: h, config: config)
                status = await engine.peek()
                _ = lock
            } else if let r = DaemonSocket.ask(h.socketPath, DaemonRequest(command: "status")), let s = r.status {
                status = s
            } else {
                throw CLIError(.invalidRequest, "another engine holds this home but does not answer")
            }
        } else {
            status = .signedOut
        }
        if json { try printJSON(status); return }
        guard status.state != .signedOut else { print("signed out"); return }
        print("\(status.account ?? "?")@\(status.server ?? "?") · device \(status.device ?? "?") · container \(status.container ?? "?")")
        print("state: \(status.state.rawValue)\(status.idle ? ", up to date" : "")")
        print("uploads: \(status.uploads.running) running, \(status.uploads.queued) queued (\(status.uploads.bytesDone)/\(status.uploads.bytesTotal) bytes)")
        print("downloads: \(status.downloads.running) running, \(status.downloads.queued) queued (\(status.downloads.bytesDone)/\(status.downloads.bytesTotal) bytes)")
        print("conflicts: \(status.conflicts)")
        if let e = status.lastError { print("last error: \(e)") }
    }
}

/// Waits for SIGTERM or SIGINT (delivered through Dispatch sources, not a handler).
enum SignalWaiter {
    nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []

    static func waitForTermination() async {
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let (stream, cont) = AsyncStream<Int32>.makeStream()
        for sig in [SIGTERM, SIGINT] {
            let src = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            src.setEventHandler { cont.yield(sig) }
            src.resume()
            sources.append(src)
        }
        for await _ in stream { break }
    }
}
