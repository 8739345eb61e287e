import ArgumentParser
import Foundation
import Logging
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
import UbiqProtocol
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
    @Option(name: .long, help: "all (keep every file's content) or on-demand (default: config.toml's, else all).") var download: String?
    @Option(name: .long, help: "For an https:// server with a certificate of its own: trust the certificates in this PEM file (its authority's, or its self-signed one) instead of the system's authorities.")
    var caCert: String?
    @Flag(name: .long, help: "Encrypt this account end to end (its first device, before it holds documents): makes the account key and prints its recovery key once.")
    var encrypted = false
    @Option(name: .long, help: "Sign in to an end-to-end encrypted account with its recovery key (the one printed when it was encrypted).")
    var recoveryKey: String?
    @Option(name: .long, help: "On an encrypted account without --recovery-key: how long to wait for a trusted device's approval, in seconds (0: do not wait).")
    var approvalWait = 600
    @OptionGroup var home: HomeOption

    func validate() throws {
        if encrypted && recoveryKey != nil { throw ValidationError("--encrypted makes a new key; --recovery-key signs in with an existing one: give one of them") }
        guard url.hasPrefix("http://") || url.hasPrefix("https://"), URL(string: url)?.host != nil else {
            throw ValidationError("the server URL must look like http://HOST:PORT")
        }
        if let download, DeviceConfig.DownloadPolicy(rawValue: download) == nil { throw ValidationError("--download must be 'all' or 'on-demand'") }
    }

    func run() async throws {
        let h = home.resolve()
        let previous = try? DeviceConfig.load(h)
        let base0 = url.hasSuffix("/") ? String(url.dropLast()) : url
        let switching = previous.map { $0.user != user || $0.server != base0 } ?? false
        // The first container: the one named, else (signing in again) the one there was.
        let containerID = try home.containerID() ?? (switching ? nil : previous?.container) ?? DeviceConfig.defaultContainer
        if let p = previous, switching, try HomeLock.acquire(h) == nil {
            throw CLIError(.invalidRequest, "a daemon is running for this home (signed in as \(p.user)); stop it first")
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
        // Trust: the file given, else what this home already trusted for this server.
        var trusted = previous?.server == base ? previous?.serverCertificates : nil
        if let caCert {
            guard let data = FileManager.default.contents(atPath: caCert) else { throw CLIError(.notFound, "cannot read \(caCert)") }
            let pem = String(decoding: data, as: UTF8.self)
            do { _ = try ServerTrust.certificates(pem: pem) } catch let e as ClientError { throw CLIError(.invalidValue, "\(caCert): \(e.message)") }
            trusted = pem
        }
        if base.hasPrefix("https://"), trusted == nil, ServerTrust.isIPAddress(URL(string: base)?.host ?? "") {
            throw CLIError(.invalidValue, ServerTrust.ipNeedsOwnCertificate)
        }
        let (_, r) = try await mapClient {
            try await UbiqAPIClient(baseURL: base, trusting: trusted).login(user: user, password: password, deviceName: deviceName, deviceID: previous?.deviceID)
        }
        if let p = previous, switching {
            // Another account (or container): the old one's data leaves this device first.
            do { try await SignOut.run(h, p, force: false) } catch {
                try? await UbiqAPIClient(baseURL: base, token: r.token, trusting: trusted).revoke()
                throw error
            }
            print("signed out of \(p.server) (\(p.user))")
        }
        var config = DeviceConfig(server: base, user: r.user, deviceID: r.deviceID, deviceName: r.deviceName, container: containerID,
                                  download: DeviceConfig.DownloadPolicy(rawValue: try EffectiveSettings.load().download(flag: download).0) ?? .all, token: r.token)
        config.serverCertificates = trusted
        let client = UbiqAPIClient(baseURL: base, token: r.token, trusting: trusted)
        let shownRecovery: RecoveryKey?
        do {
            let kept = try await AccountKeying(client: client, user: r.user, container: containerID, device: r.deviceID,
                                               deviceName: r.deviceName, approvalWait: max(0, approvalWait))
                .keys(encrypt: encrypted, recoveryKey: recoveryKey, kept: switching ? nil : previous)
            config.accountKey = kept.ring?.text
            config.deviceKey = kept.deviceKey?.rawRepresentation.base64EncodedString()
            shownRecovery = kept.recovery
        } catch {
            try? await client.revoke()  // no device stays signed in without the key it needs
            throw error
        }
        if let p = previous, !switching {
            for id in p.containers { _ = try? config.adding(id) }  // the same account: every container stays
            if p.accountKey == nil, config.accountKey != nil {
                // Encrypted since this device last synced it (`ubiq encrypt` purged the plain
                // items): what its engines knew is of the plain account. The folder stays; the
                // engines start afresh and match it to the sealed items.
                guard let lock = try HomeLock.acquire(h) else {
                    try? await client.revoke()
                    throw CLIError(.invalidRequest, "a daemon is running for this home; stop it first, then sign in again")
                }
                for id in config.containers { try Conversion.resetState(h, id) }
                withExtendedLifetime(lock) {}
            }
        }
        try config.save(h)
        try FileManager.default.createDirectory(at: h.containerFolder(containerID).appendingPathComponent("Documents"), withIntermediateDirectories: true)
        print("signed in to \(base) as \(r.user) (device \(r.deviceName)); folder \(h.containerFolder(containerID).path)")
        if let shownRecovery { print(AccountKeying.recoveryNotice(shownRecovery, server: base, user: r.user)) } else if config.accountKey != nil { print("this account is encrypted end to end; this device holds its key") }
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
        try await SignOut.run(h, config, force: force)
        print("signed out of \(config.server) (\(config.user))")
    }
}

/// Signing a home out of its account (product §2.9): refuses while changes are not uploaded
/// (unless forced: they are first copied beside the container folder), then revokes the device
/// token and removes the account's config, engine state, partial downloads and container folder
/// (everything in it is on the server). Excluded `.nosync` items are always copied out first.
enum SignOut {
    static func run(_ h: DeviceHome, _ config: DeviceConfig, force: Bool) async throws {
        guard let lock = try HomeLock.acquire(h) else { throw CLIError(.invalidRequest, "a daemon is running for this home; stop it first") }
        // Every container the device syncs is checked (and rescued) before anything is removed.
        var devices: [(ContainerID, DeviceRuntime)] = []
        for id in config.containers { devices.append((id, try DeviceRuntime(home: h, config: config.acting(on: id)))) }
        var unsynced: [(ContainerID, DeviceRuntime, pending: [String], settings: [String])] = []
        for (id, device) in devices {
            let pending = await device.engine.unsyncedLocalPaths().map { "\($0)" }
            await device.kv.synchronize()
            unsynced.append((id, device, pending, await device.kv.pendingKeys()))
        }
        if !force, let first = unsynced.first(where: { !$0.pending.isEmpty || !$0.settings.isEmpty }) {
            let what = first.pending.isEmpty ? "\(Counted.of(first.settings.count, "setting")) not uploaded yet (e.g. \(first.settings[0]))"
                : "\(Counted.of(first.pending.count, "local change")) not uploaded yet (e.g. \(first.pending[0]))"
            throw CLIError(.invalidRequest, "\(what) in \(first.0); run 'ubiq sync' when the server is reachable, or use --force")
        }
        for (_, device, _, settings) in unsynced {
            let engine = device.engine
            let keep = await engine.unsyncedLocalPaths() + (await engine.excludedPaths())
            var rescued: URL?
            if !keep.isEmpty {
                rescued = try await engine.rescue(keep)
                print("\(Counted.of(keep.count, "item")) not on the server copied to \(rescued!.path)")
            }
            if !settings.isEmpty {
                var entries: [KVEntry] = []
                for k in settings { if let e = await device.kv.entry(forKey: k) { entries.append(e) } }
                var folder = rescued
                if folder == nil { folder = try await engine.rescue([]) }
                let file = folder!.appendingPathComponent("settings-not-synced.json")
                try WireCoding.encode(entries).write(to: file)
                print("\(Counted.of(settings.count, "setting")) not on the server saved to \(file.path)")
            }
        }
        try? await config.apiClient.revoke()
        try FileManager.default.removeItem(at: h.configFile)
        for id in config.containers {
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(at: URL(fileURLWithPath: h.stateDatabase(id).path + suffix))
                try? FileManager.default.removeItem(at: URL(fileURLWithPath: h.keyValueDatabase(id).path + suffix))
            }
            try? FileManager.default.removeItem(at: h.partialFolder(id))
            try? FileManager.default.removeItem(at: h.containerFolder(id))
        }
        withExtendedLifetime(lock) {}
    }
}

/// `ubiq daemon`
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "daemon", abstract: "Run the sync engine in the foreground until stopped.")
    @OptionGroup var home: HomeOption

    func run() async throws {
        let (h, config) = try home.config()
        guard let lock = try HomeLock.acquire(h) else { throw CLIError(.invalidRequest, "another engine is already running for this home") }
        // The daemon logs to <state>/ubiq.log, rotated (a service's output is seldom read).
        var logger = Logger(label: "ubiq.daemon") { FileLogHandler(label: $0, url: h.logFile) }
        logger.logLevel = try EffectiveSettings.load().logLevel().0
        // One engine per container the device syncs; programs add containers by naming them.
        let devices = try DeviceRuntimes(home: h, config: config, logger: logger)
        let socket = DaemonSocket(path: h.socketPath) { req, container, emit in await devices.handle(req, container: container, emit: emit) }
        try await socket.start()
        await devices.start()
        let folders = config.containers.map { h.containerFolder($0).path }.joined(separator: ", ")
        print("ubiq daemon: syncing \(folders) with \(config.server) as \(config.user) (log: \(h.logFile.path))")
        fflush(nil)
        // Run until SIGTERM or SIGINT.
        await SignalWaiter.waitForTermination()
        await devices.stop()
        socket.stop()
        _ = lock
    }
}

/// `ubiq sync`
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sync", abstract: "One full pass; exit 0 when in sync.")
    @OptionGroup var home: HomeOption

    static func describe(_ s: EngineStatus) -> String { DeviceService.describe(s) }

    func run() async throws {
        let (h, found) = try home.config()
        guard let lock = try HomeLock.acquire(h) else {
            let r = try await DaemonAnswer.ask(h, explicitHome: home.home, .sync, container: found.container)
            if !r.ok { throw CLIError(.invalidRequest, r.message ?? "not in sync") }
            print("in sync")
            return
        }
        // On an encrypted account, a generation another device rolled is taken first: what
        // comes down may be sealed with it, and what goes up must be.
        var config = found
        if config.accountKey != nil, let ring = try? await freshRing(home: h, config: config) { config.accountKey = ring.text }
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
        if try DeviceConfig.load(h) != nil {
            let (_, config) = try home.config()
            if let lock = try HomeLock.acquire(h) {
                let engine = try SyncEngine(home: h, config: config)
                status = await engine.peek()
                _ = lock
            } else if let s = try await DaemonAnswer.ask(h, explicitHome: home.home, .status, container: config.container).status {
                status = s
            } else {
                throw CLIError(.invalidRequest, "the daemon answered without a status")
            }
        } else {
            status = .signedOut
        }
        if json { try printJSON(status); return }
        guard status.state != .signedOut else { print("signed out"); return }
        print("\(status.account ?? "?")@\(status.server ?? "?") · device \(status.device ?? "?") · container \(status.container ?? "?")")
        var state = status.paused == true ? "paused" : status.state.rawValue
        // Offline and not paused: when it tries again, or that it is trying (no retry is due
        // while an attempt runs).
        if status.state == .offline, status.paused != true {
            state += status.retryIn.map { " (trying again in \(max(1, Int($0.rounded(.up)))) s)" } ?? " (trying now)"
        }
        print("state: \(state)\(status.idle ? ", up to date" : "")")
        if let w = status.waiting { print("waiting: \(w) change\(w == 1 ? "" : "s") made here, not yet on the server") }
        for (name, t) in [("uploads", status.uploads), ("downloads", status.downloads)] {
            let done = t.filesTotal.map { " · \(t.done ?? 0) of \($0) done" } ?? ""
            print("\(name): \(t.running) running, \(t.queued) queued (\(t.bytesDone)/\(t.bytesTotal) bytes)\(done)")
        }
        print("conflicts: \(status.conflicts)")
        if let e = status.lastError { print("last error: \(e)") }
        if let w = status.watch { print("watching: \(w)") }
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
