import ArgumentParser
import Foundation
import Hummingbird
import HummingbirdTLS
import Logging
import UbiqCore
import UbiqEngine
import UbiqServer
import UbiqStorage

/// `ubiq server …`
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Run the sync server, or manage its accounts.",
        subcommands: [ServerRun.self, UserCommand.self, DeviceAdminCommand.self, ServerGC.self, ServerMigrate.self, ServerKeyCommand.self],
        defaultSubcommand: ServerRun.self
    )
}

/// Options shared by the server commands.
struct DataOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Data directory (default: $XDG_DATA_HOME/ubiquity/server).",
                                            discussion: "It holds the embedded database, the chunk folder or a bucket's local index, so one server uses it at a time — unless --database postgres://… and --blobs s3://… are both given: then it holds nothing the servers share, and several servers on one machine may use the same folder."))
    var data: String?

    /// The data directory. Every server command asks for it before it touches the data, so this
    /// is where the process's umask becomes 077: what any of them writes there (the database
    /// and its journal, chunks, packs) is the server user's alone.
    func directory() -> URL {
        umask(0o077)
        if let data { return URL(fileURLWithPath: data, isDirectory: true) }
        return ServerConfiguration.defaultDataDirectory(environment: ProcessInfo.processInfo.environment)
    }

    @Option(name: .long, help: "Where chunks are kept: s3://BUCKET?endpoint=URL&region=REGION (credentials in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY); default: chunks/ in the data directory.")
    var blobs: String?

    @Option(name: .long, help: "Where metadata is kept: postgres://USER@HOST:PORT/DB[?sslmode=require] (password in the URL, UBIQ_DATABASE_PASSWORD or the file UBIQ_DATABASE_PASSWORD_FILE names); default: metadata.sqlite in the data directory.")
    var database: String?

    @Option(name: .long, help: ArgumentHelp("The server key file chunks are sealed with at rest (also UBIQ_SERVER_KEY_FILE; default: server.key in the data directory, made on the first start).",
                                            discussion: "Keep it (or a copy) apart from the chunks: without it a copy of the chunk folder, the bucket or a backup reveals no content — and with it lost, nothing sealed with it can be read. Every server on one database must use the same file."))
    var keyFile: String?

    /// `--database postgres://…` and `--blobs s3://…` both: the data folder then holds nothing
    /// servers share, and several may use it at once.
    var storesAreRemote: Bool { !(database ?? "").isEmpty && !(blobs ?? "").isEmpty }

    /// A password in `--database` is in the process list, where every local user reads it
    /// (#45 row 7): said on stderr, with where else it can come from.
    static func warnOfPassword(in database: String?) {
        guard let database, URLComponents(string: database)?.password != nil else { return }
        FileHandle.standardError.write(Data(("ubiq: warning: --database holds a password, which every user of this machine can read in the "
                                             + "process list; give it in UBIQ_DATABASE_PASSWORD or in a file UBIQ_DATABASE_PASSWORD_FILE names\n").utf8))
    }

    /// The server's stores: the metadata where `--database` says, the chunks where `--blobs` says.
    func services() async throws -> ServerServices {
        let env = ProcessInfo.processInfo.environment
        let location: BlobStoreLocation
        let metadata: MetadataLocation
        do {
            location = try BlobStoreLocation.parse(blobs, environment: env)
            metadata = try MetadataLocation.parse(database, environment: env)
        } catch let e as CoreError { throw CLIError(e.code, e.message) }
        Self.warnOfPassword(in: database)
        let services = try await ServerServices.open(at: directory(), database: metadata, blobs: location, environment: env, keyFile: keyFile)
        if let made = services.keyFileMade {
            // Said once, by whichever server command made it (often `user add`, before the first start).
            FileHandle.standardError.write(Data(("ubiq: made the server key \(made): chunks are sealed with it at rest. "
                                                 + "Keep a copy apart from the chunks — without it they cannot be read\n").utf8))
        }
        return services
    }
}

/// `ubiq server [--data DIR] [--listen HOST:PORT] [--tls-cert F --tls-key F]`
struct ServerRun: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run the server in the foreground (the default).")

    @OptionGroup var data: DataOption

    @Option(name: .long, help: "Address to listen on, HOST:PORT (default: 127.0.0.1:\(ServerConfiguration.defaultPort)). Port 0 picks a free port.")
    var listen: String = "127.0.0.1:\(ServerConfiguration.defaultPort)"

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Option(name: .long, help: "Serve HTTPS with this certificate (PEM: the server's certificate, then any intermediates). Needs --tls-key.")
    var tlsCert: String?

    @Option(name: .long, help: "The private key of --tls-cert (PEM).")
    var tlsKey: String?

    @Option(name: .long, help: "Most connections open at once; past it a new connection is closed at once (default: the open-file limit less \(ConnectionCap.reserved) for the server's own files, at most \(ConnectionCap.ceiling): \(ConnectionCap.here) on this machine).")
    var maxConnections: Int?

    /// `--max-connections`, or the default sized from the open-file limit.
    var connectionCap: Int { maxConnections ?? ConnectionCap.here }

    @Option(name: .long, help: "Most connections open at once from one address (default: a quarter of --max-connections). Behind a proxy on this machine every client has its address: raise it to --max-connections and limit clients in the proxy.")
    var maxConnectionsPerAddress: Int?

    func validate() throws {
        do { _ = try ServerConfiguration.parseListen(listen) } catch let e as CoreError { throw ValidationError(e.message) }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown log level '\(logLevel)'") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        guard (1...1_000_000).contains(connectionCap) else { throw ValidationError("--max-connections takes 1 to 1000000") }
        if let m = maxConnectionsPerAddress, !(1...connectionCap).contains(m) { throw ValidationError("--max-connections-per-address takes 1 to --max-connections") }
    }

    func run() async throws {
        let (host, port) = try ServerConfiguration.parseListen(listen)
        var tls: TLSConfiguration?
        if let tlsCert, let tlsKey {
            do { tls = try ServerTLS.load(certFile: tlsCert, keyFile: tlsKey) } catch let e as CoreError { throw CLIError(e.code, e.message) }
        }
        let dir = data.directory()
        var opened = try await data.services()
        let adminToken = ServerServices.newAdminToken()
        opened.adminToken = adminToken
        let services = opened
        // One server per data folder while the folder holds a store (the SQLite database, the
        // chunk folder, a bucket's local index): a second one would not see the first one's
        // pushes. With both stores remote nothing in it is shared (#45 §3): no lock, and no
        // admin.json (`ubiq server gc` then collects itself, one server of the fleet at a time).
        let remote = data.storesAreRemote
        var lock: HomeLock?
        if !remote {
            do { lock = try HomeLock.acquire(file: dir.appendingPathComponent("server.lock")) } catch let e as EngineError { throw CLIError(.storageFailure, e.message) }
            guard lock != nil else { throw CLIError(.invalidRequest, "another ubiq server is already using \(dir.path); stop it first or give --data another folder") }
        }
        defer { withExtendedLifetime(lock) {} }
        var logger = Logger(label: "ubiq.server")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        removeLeftovers(services, logger)
        let resealing = services.resealInBackground(logger)
        defer { resealing.cancel() }
        let announced = logger
        Self.raiseOpenFileLimit(to: connectionCap + ConnectionCap.reserved, logger)
        let scheme = tls == nil ? "http" : "https"
        let app = try CLIError.map({ "cannot use the TLS certificate and key: \($0)" }) {
            try UbiqServerApp.make(services: services, host: host, port: port, logger: logger, maxConnections: connectionCap,
                                   maxConnectionsPerAddress: maxConnectionsPerAddress, tls: tls) { bound in
                let shownHost = host.contains(":") ? "[\(host)]" : host
                print("ubiq server listening on \(scheme)://\(shownHost):\(bound) (data: \(dir.path))")
                fflush(nil)
                if !remote {
                    AdminAccess(url: AdminAccess.url(scheme: scheme, host: host, port: bound), token: adminToken, certificate: tlsCert)
                        .write(in: dir, announced)
                }
            }
        }
        do {
            try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch {
            await services.close()
            throw CLIError(.storageFailure, "cannot serve on \(host):\(port): \(error)")
        }
        await services.close()
    }
}

/// Removes, beside the serving, the packs and temporary files an earlier server process left
/// when it was killed mid-write. Listed now — under the data folder's lock, before anything is
/// served — so nothing this process writes is among them.
extension ServerRun {
    /// Raises the soft limit of open files towards `wanted` (at most the hard limit), so the
    /// connection cap is reached before the process runs out of descriptors (the soft limit is
    /// often 1,024).
    static func raiseOpenFileLimit(to wanted: Int, _ logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(wanted) else { return }
        let before = limit.rlim_cur
        limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 || limit.rlim_cur < rlim_t(wanted) {
            logger.notice("open files limited to \(max(before, limit.rlim_cur)); connections past it are refused by the system")
        }
    }
}

func removeLeftovers(_ services: ServerServices, _ logger: Logger) {
    guard let store = ((services.chunks as? SealedChunkStore)?.inner ?? services.chunks) as? FolderChunkStore else { return }
    let candidates: OrphanCandidates
    do { candidates = try store.leftovers() } catch {
        logger.warning("cannot look for leftovers in the chunk folder: \(error)")
        return
    }
    guard !candidates.packs.isEmpty || !candidates.temporaries.isEmpty else { return }
    Task.detached(priority: .background) {
        do {
            let (files, bytes) = try await store.removeOrphans(candidates)
            if files > 0 { logger.info("removed \(Counted.of(files, "file")), \(ByteSize.format(bytes)), left in the chunk folder by an interrupted write") }
        } catch {
            logger.warning("cannot remove leftovers from the chunk folder: \(error)")
        }
    }
}

/// `ubiq server user …`
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "user", abstract: "Manage accounts.",
                                                    subcommands: [UserAdd.self, UserList.self, UserPasswd.self, UserQuota.self, UserDelete.self])
}

/// `ubiq server user add NAME [--password-stdin] [--quota SIZE] [--data DIR]`
struct UserAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Create an account (prints a generated password unless one is given).")

    @Argument(help: "User name: 1-64 characters of a-z 0-9 . _ -")
    var name: String

    @Flag(name: .long, help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    @Option(name: .long, help: "Storage quota, e.g. 5GiB, 500MB (default: 5GiB).")
    var quota: String?

    @OptionGroup var data: DataOption

    func run() async throws {
        let quotaBytes = try quota.map { try ByteSize.parse($0) } ?? ServerConfiguration.defaultQuota
        let (password, generated) = try PasswordInput.read(fromStdin: passwordStdin)
        let services = try await data.services()
        try await services.addUser(name: name, password: password, quota: quotaBytes)
        print("created user \(name) (quota \(ByteSize.format(quotaBytes)))")
        if generated { print("password: \(password)") }
    }

}

/// The default cap on a server's open connections, sized from the open-file limit: its hard
/// value (what the server may raise its own limit to) less `reserved` descriptors for the
/// server's own files — database, chunk packs, logs — at least `floor`, at most `ceiling`
/// (an unlimited system does not make a million connections a default).
enum ConnectionCap {
    static let reserved = 256
    static let floor = 64
    static let ceiling = 65_536

    /// The cap for a hard open-file limit of `hardLimit` descriptors.
    static func from(hardLimit: UInt64) -> Int {
        let usable = hardLimit > UInt64(ceiling + reserved) ? ceiling : Int(hardLimit) - reserved
        return max(floor, usable)
    }

    /// The cap on this machine (the process's hard limit; 1,000 when it cannot be read).
    static var here: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1000 }
        return from(hardLimit: UInt64(limit.rlim_max))
    }
}
