import Foundation
import Logging
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine

/// One device: its own home in a temp folder, signed in to a test server, with a running engine.
public final class TestDevice: @unchecked Sendable {
    public let home: DeviceHome
    public let dir: TempDirectory
    /// Its config (a test that rolls an encrypted account's key changes it: a restarted engine
    /// opens with what it holds).
    public var config: DeviceConfig
    public private(set) var engine: SyncEngine
    /// What the engine talks to in place of the server's client (see `make`'s `server`).
    public let server: (any SyncServer)?
    /// What the engine changes the folder through in place of the kernel (see `make`'s `disk`).
    public let disk: (any FolderAccess)?
    /// The engine's recent log lines (printed when a bounded wait of the test runs out).
    public let log: RingLog
    /// How long its engine trusts the watcher without reading the whole folder.
    public var fullScanEvery = FolderScans.standardFullEvery
    /// The most inotify watches its engine adds (nil: the kernel's limit).
    public var watchLimit: Int?

    public var folder: URL { home.containerFolder(config.container) }

    /// Logs in as `user` and starts an engine (watcher + push) unless `start` is false. `via`: the
    /// URL the engine talks to instead of the server's own (a `LoopbackProxy` in front of it).
    public static func make(_ server: TestServer, user: String, name: String, password: String = "secret-pw",
                            container: ContainerID = try! ContainerID(validating: "TEAM.com.example.notes"),
                            download: DeviceConfig.DownloadPolicy = .all, via: String? = nil, start: Bool = true,
                            wrap: ((UbiqAPIClient) -> any SyncServer)? = nil, disk: (any FolderAccess)? = nil,
                            accountKey: AccountKey? = nil, fullScanEvery: Duration = FolderScans.standardFullEvery,
                            watchLimit: Int? = nil) async throws -> TestDevice {
        let dir = try TempDirectory("ubiq-device-\(name)")
        let home = DeviceHome.rooted(at: dir.url)
        let (_, r) = try await UbiqAPIClient(baseURL: server.baseURL, trusting: server.trusted).login(user: user, password: password, deviceName: name)
        var config = DeviceConfig(server: via ?? server.baseURL, user: user, deviceID: r.deviceID, deviceName: name, container: container,
                                  download: download, token: r.token)
        config.serverCertificates = server.trusted
        config.accountKey = accountKey?.text
        try config.save(home)
        let log = RingLog(name: "device \(name)").registerWithCurrentTest()
        let stand = wrap.map { $0(config.apiClient) }
        let engine = try SyncEngine(home: home, config: config, server: stand, disk: disk ?? SystemFolder(),
                                    logger: log.logger(label: "device.\(name)", fallback: .error), settleTime: .milliseconds(300), fullScanEvery: fullScanEvery,
                                    watchLimit: watchLimit)
        let d = TestDevice(home: home, dir: dir, config: config, engine: engine, server: stand, disk: disk, log: log)
        d.fullScanEvery = fullScanEvery
        d.watchLimit = watchLimit
        if start { await engine.start() }
        return d
    }

    init(home: DeviceHome, dir: TempDirectory, config: DeviceConfig, engine: SyncEngine, server: (any SyncServer)? = nil,
         disk: (any FolderAccess)? = nil, log: RingLog) {
        self.home = home; self.dir = dir; self.config = config; self.engine = engine; self.server = server; self.disk = disk; self.log = log
    }

    /// Stops the engine and opens a fresh one on the same state (as after a restart).
    public func restart(start: Bool = true) async throws {
        await engine.stop()
        engine = try SyncEngine(home: home, config: config, server: server, disk: disk ?? SystemFolder(),
                                logger: log.logger(label: "device.\(config.deviceName)", fallback: .error), settleTime: .milliseconds(300),
                                fullScanEvery: fullScanEvery, watchLimit: watchLimit)
        if start { await engine.start() }
    }

    public func stop() async { await engine.stop() }

    public func url(_ p: String) -> URL { folder.appendingPathComponent(p) }

    public func write(_ p: String, _ text: String) throws { try write(p, bytes: Array(text.utf8)) }

    public func write(_ p: String, bytes: [UInt8]) throws {
        let u = url(p)
        try FileManager.default.createDirectory(at: u.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: u)
    }

    public func read(_ p: String) -> String? { (try? Data(contentsOf: url(p))).map { String(decoding: $0, as: UTF8.self) } }
    public func readBytes(_ p: String) -> [UInt8]? { (try? Data(contentsOf: url(p))).map { [UInt8]($0) } }
    public func exists(_ p: String) -> Bool { FileManager.default.fileExists(atPath: url(p).path) }

    /// Every file and folder under the container folder, as relative path → content (nil for folders).
    public func snapshot() -> [String: [UInt8]?] {
        var out: [String: [UInt8]?] = [:]
        let base = folder.path
        guard let e = FileManager.default.enumerator(atPath: base) else { return out }
        while let rel = e.nextObject() as? String {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: base + "/" + rel, isDirectory: &isDir) else { continue }  // gone meanwhile
            out[rel] = isDir.boolValue ? .some(nil) : (try? Data(contentsOf: URL(fileURLWithPath: base + "/" + rel))).map { [UInt8]($0) }
        }
        return out
    }

    public func remove() { dir.remove() }
}

/// Polls `condition` until it holds or `timeout` passes (a bounded wait on another process's or
/// device's effect); returns whether it held. When it did not, the recent log lines of the test's
/// devices and servers are printed.
public func eventually(timeout: Duration = .seconds(30), poll: Duration = .milliseconds(20), fileID: String = #fileID, line: Int = #line,
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    let end = clock.now.advanced(by: timeout)
    while clock.now < end {
        if try await condition() { return true }
        try? await Task.sleep(for: poll)
    }
    if try await condition() { return true }
    print("[eventually] \(fileID):\(line): not so after \(timeout)\n" + TestRings.dumpForCurrentTest())
    return false
}

/// Polls `condition` for `within` and answers whether it ever held (for what must *not* happen
/// in that time: nothing is printed when it does not).
public func ever(within: Duration, poll: Duration = .milliseconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let end = ContinuousClock.now.advanced(by: within)
    while ContinuousClock.now < end {
        if try await condition() { return true }
        try? await Task.sleep(for: poll)
    }
    return try await condition()
}

/// A server with one account and two started devices, "A" and "B", for a test that stops and
/// restarts the server itself (`withFleet` owns its server). The caller removes the devices.
public func serverWithTwoDevices(user: String = "alice") async throws -> (server: TestServer, a: TestDevice, b: TestDevice) {
    let server = try await TestServer.start()
    try await server.user(user)
    let a = try await TestDevice.make(server, user: user, name: "A")
    let b = try await TestDevice.make(server, user: user, name: "B")
    return (server, a, b)
}
