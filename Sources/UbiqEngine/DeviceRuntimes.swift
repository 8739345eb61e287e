import Foundation
import Logging
import UbiqCore
import UbiqDaemonProtocol

/// A daemon's engines: one ``DeviceRuntime`` per container the device syncs, each with its own
/// folder (`<root>/<container>/`), state and settings database. A request names its container
/// (none: the default one); a container not synced yet is added — to the config, so it stays —
/// and started (up to ``DeviceConfig/containerLimit``).
public actor DeviceRuntimes {
    public let home: DeviceHome
    public private(set) var config: DeviceConfig
    let logger: Logger
    let settleTime: Duration
    var runtimes: [ContainerID: DeviceRuntime] = [:]
    var started = false

    /// Opens the engine of every container the config lists.
    public init(home: DeviceHome, config: DeviceConfig, logger: Logger = Logger(label: "ubiq.engine"), settleTime: Duration = .seconds(2)) throws {
        self.home = home
        self.config = config
        self.logger = logger
        self.settleTime = settleTime
        for id in config.containers {
            runtimes[id] = try DeviceRuntime(home: home, config: config.acting(on: id), logger: logger, settleTime: settleTime)
        }
    }

    /// Starts syncing every container.
    public func start() async {
        started = true
        for r in runtimes.values { await r.start() }
    }

    public func stop() async {
        started = false
        for r in runtimes.values { await r.stop() }
    }

    /// The runtime of `id` (nil: the default container), added and started when new.
    public func runtime(_ id: ContainerID?) async throws -> DeviceRuntime {
        let id = id ?? config.container
        if let r = runtimes[id] { return r }
        var c = (try? DeviceConfig.load(home)) ?? nil ?? config  // a command may have added some meanwhile
        _ = try c.adding(id)
        try FileManager.default.createDirectory(at: home.containerFolder(id).appendingPathComponent("Documents"), withIntermediateDirectories: true)
        let r = try DeviceRuntime(home: home, config: c.acting(on: id), logger: logger, settleTime: settleTime)
        try c.save(home)
        c.container = config.container  // this run's default stays (a daemon started with --container keeps it)
        config = c
        runtimes[id] = r
        logger.info("now syncing container \(id) in \(home.containerFolder(id).path)")
        if started { await r.start() }
        return r
    }

    /// Answers a request addressed to `container` (nil: the default one).
    public func handle(_ request: DeviceRequest, container: ContainerID?, emit: @escaping @Sendable (DeviceResponse) async -> Bool) async -> DeviceResponse {
        if case .containers = request {
            var r = DeviceResponse(ok: true)
            var list: [ContainerState] = []
            for id in config.containers {
                let status = await runtimes[id]?.engine.status()
                list.append(ContainerState(id: id.string, folder: home.containerFolder(id).path, isDefault: id == config.container,
                                           state: status?.state.rawValue ?? "stopped", idle: status?.idle ?? false))
            }
            r.containers = list
            return r
        }
        do {
            let runtime = try await self.runtime(container)
            return await runtime.service.handle(request, emit: emit)
        } catch {
            return .failure(error)
        }
    }
}
