import Foundation
import UbiqCore
import UbiqTransport

/// Where one device keeps its configuration, state and container folders (product §6):
/// `--home DIR`, else `$UBIQ_HOME`, else the XDG locations.
public struct DeviceHome: Sendable, Equatable {
    public let configDirectory: URL
    public let stateDirectory: URL
    /// Parent of the container folders (`<home>/Ubiquity` or `~/Ubiquity`).
    public let containersRoot: URL

    public init(configDirectory: URL, stateDirectory: URL, containersRoot: URL) {
        self.configDirectory = configDirectory
        self.stateDirectory = stateDirectory
        self.containersRoot = containersRoot
    }

    /// A home rooted at one directory: `DIR/config`, `DIR/state`, `DIR/Ubiquity`.
    public static func rooted(at dir: URL) -> DeviceHome {
        DeviceHome(configDirectory: dir.appendingPathComponent("config"), stateDirectory: dir.appendingPathComponent("state"),
                   containersRoot: dir.appendingPathComponent("Ubiquity"))
    }

    /// Resolves the home from `--home`, then `UBIQ_HOME`, then XDG.
    public static func resolve(explicit: String?, environment: [String: String]) -> DeviceHome {
        if let explicit, !explicit.isEmpty { return rooted(at: URL(fileURLWithPath: explicit).standardizedFileURL) }
        if let env = environment["UBIQ_HOME"], !env.isEmpty { return rooted(at: URL(fileURLWithPath: env).standardizedFileURL) }
        let home = URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory())
        func xdg(_ key: String, _ fallback: String) -> URL {
            if let v = environment[key], v.hasPrefix("/") { return URL(fileURLWithPath: v) }
            return home.appendingPathComponent(fallback)
        }
        return DeviceHome(configDirectory: xdg("XDG_CONFIG_HOME", ".config").appendingPathComponent("ubiquity"),
                          stateDirectory: xdg("XDG_STATE_HOME", ".local/state").appendingPathComponent("ubiquity"),
                          containersRoot: home.appendingPathComponent("Ubiquity"))
    }

    public var configFile: URL { configDirectory.appendingPathComponent("config.json") }
    public var lockFile: URL { stateDirectory.appendingPathComponent("engine.lock") }
    public var socketPath: String { stateDirectory.appendingPathComponent("daemon.sock").path }
    public var logFile: URL { stateDirectory.appendingPathComponent("ubiq.log") }

    /// The container's folder: `<root>/<container>/`.
    public func containerFolder(_ c: ContainerID) -> URL { containersRoot.appendingPathComponent(c.string, isDirectory: true) }
    /// Partial downloads: beside the container folder (same file system, never synced).
    public func partialFolder(_ c: ContainerID) -> URL { containersRoot.appendingPathComponent(".\(c.string).partial", isDirectory: true) }
    /// The engine's database for one container.
    public func stateDatabase(_ c: ContainerID) -> URL { stateDirectory.appendingPathComponent("\(c.string).sqlite") }
}

/// What `ubiq login` records: the server, the account and this device.
public struct DeviceConfig: Codable, Sendable, Equatable {
    public enum DownloadPolicy: String, Codable, Sendable { case all, onDemand = "on-demand" }

    public var server: String
    public var user: String
    public var deviceID: DeviceID
    public var deviceName: String
    /// The container commands act on when none is named (the first one signed in with).
    public var container: ContainerID
    /// Every container this device syncs (the default one first). Grows when a command's
    /// `--container` or a program names a new one; a config written before there were several
    /// has only its one.
    public var containers: [ContainerID]
    public var download: DownloadPolicy
    public var token: String
    /// Certificates (PEM) an `https://` server may present instead of the system's
    /// authorities' (`ubiq login --ca-cert FILE`); nil trusts the system's.
    public var serverCertificates: String?
    /// An end-to-end encrypted account's key (`AccountKey.text`); nil for a plain account. It
    /// is kept here, readable by the owner only, and nowhere on the server.
    public var accountKey: String?
    /// On an encrypted account: this device's X25519 private key (base64), whose public half
    /// is on the account's device list; new generations of the account key are sealed to it.
    public var deviceKey: String?
    /// True while `ubiq encrypt` converts the account on this device (its engines do not start
    /// until it has finished: the server still holds plain items it would not open).
    public var encrypting: Bool?

    public init(server: String, user: String, deviceID: DeviceID, deviceName: String, container: ContainerID, download: DownloadPolicy, token: String) {
        self.server = server; self.user = user; self.deviceID = deviceID; self.deviceName = deviceName
        self.container = container; self.download = download; self.token = token
        self.containers = [container]
    }

    enum CodingKeys: String, CodingKey { case server, user, deviceID, deviceName, container, containers, download, token, serverCertificates, accountKey, deviceKey, encrypting }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        server = try c.decode(String.self, forKey: .server)
        user = try c.decode(String.self, forKey: .user)
        deviceID = try c.decode(DeviceID.self, forKey: .deviceID)
        deviceName = try c.decode(String.self, forKey: .deviceName)
        container = try c.decode(ContainerID.self, forKey: .container)
        download = try c.decode(DownloadPolicy.self, forKey: .download)
        token = try c.decode(String.self, forKey: .token)
        serverCertificates = try c.decodeIfPresent(String.self, forKey: .serverCertificates)
        accountKey = try c.decodeIfPresent(String.self, forKey: .accountKey)
        deviceKey = try c.decodeIfPresent(String.self, forKey: .deviceKey)
        encrypting = try c.decodeIfPresent(Bool.self, forKey: .encrypting)
        let listed = try c.decodeIfPresent([ContainerID].self, forKey: .containers) ?? []
        var all = [container]
        for id in listed where !all.contains(id) { all.append(id) }
        containers = all
    }

    /// The most containers one device syncs (each has an engine, a folder watch and a database).
    public static let containerLimit = 32

    /// Every generation of the account's key this device holds, for an encrypted account; nil
    /// for a plain one.
    public func keyring() throws -> AccountKeyring? {
        guard let accountKey else { return nil }
        do { return try AccountKeyring(text: accountKey) } catch {
            throw CoreError(.invalidValue, "the account key in this device's config is damaged; sign in again with --recovery-key")
        }
    }

    /// This config acting on `id` (the engine of that container uses it).
    public func acting(on id: ContainerID) -> DeviceConfig {
        var c = self
        c.container = id
        return c
    }

    /// Adds `id` to the synced containers; false when it was there already. Throws past the limit.
    public mutating func adding(_ id: ContainerID) throws -> Bool {
        guard !containers.contains(id) else { return false }
        guard containers.count < Self.containerLimit else {
            throw CoreError(.invalidRequest, "this device already syncs \(Self.containerLimit) containers, the most it syncs")
        }
        containers.append(id)
        return true
    }

    /// The default container when `--container` is not given.
    public static let defaultContainer = try! ContainerID(validating: "iCloud.default")

    /// Reads the config; nil when signed out.
    public static func load(_ home: DeviceHome) throws -> DeviceConfig? {
        guard let data = FileManager.default.contents(atPath: home.configFile.path) else { return nil }
        do { return try JSONDecoder().decode(DeviceConfig.self, from: data) } catch {
            throw CoreError(.invalidValue, "\(home.configFile.path) is damaged (\(error)); run 'ubiq login' again")
        }
    }

    /// Writes the config (readable by the owner only: it holds the device token).
    public func save(_ home: DeviceHome) throws {
        try PrivateDirectory.make(home.configDirectory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let tmp = home.configFile.appendingPathExtension("\(getpid()).\(UInt32.random(in: 0 ... .max)).tmp")  // two writers never share one
        guard FileManager.default.createFile(atPath: tmp.path, contents: try encoder.encode(self), attributes: [.posixPermissions: 0o600]) else {
            throw CoreError(.storageFailure, "cannot write \(tmp.path)")
        }
        guard rename(tmp.path, home.configFile.path) == 0 else { throw CoreError(.storageFailure, "cannot write \(home.configFile.path)") }
    }
}
