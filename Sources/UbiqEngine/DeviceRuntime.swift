import Foundation
import Logging
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol

/// One device's engine, key-value store and request service, wired together: the key-value
/// store follows the engine's push channel (`kv` messages, and `hello` after a reconnect, which
/// also sends writes made offline). Used by `ubiq daemon`, the front end and one-shot commands.
public final class DeviceRuntime: Sendable {
    public let engine: SyncEngine
    public let kv: SettingsReplica
    public let service: DeviceService

    public init(home: DeviceHome, config: DeviceConfig, logger: Logger = Logger(label: "ubiq.engine"), settleTime: Duration = .seconds(2)) throws {
        engine = try SyncEngine(home: home, config: config, logger: logger, settleTime: settleTime)
        kv = try SettingsReplica(home: home, config: config, logger: logger)
        service = DeviceService(engine: engine, kv: kv)
    }

    /// Starts syncing files and settings continuously.
    public func start() async {
        let kv = self.kv
        await engine.addPushListener { m in
            if m.kind == .kv || m.kind == .hello { Task { await kv.synchronize() } }
        }
        await engine.start()
        Task { await kv.synchronize() }
    }

    /// One look at the server and the folder without starting anything (one-shot commands).
    public func refresh() async {
        _ = await engine.peek()
        await kv.synchronize()
    }

    public func stop() async { await engine.stop() }
}
