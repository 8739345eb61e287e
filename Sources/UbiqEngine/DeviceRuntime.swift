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
    let home: DeviceHome
    let logger: Logger

    public init(home: DeviceHome, config: DeviceConfig, logger: Logger = Logger(label: "ubiq.engine"), settleTime: Duration = .seconds(2)) throws {
        engine = try SyncEngine(home: home, config: config, logger: logger, settleTime: settleTime)
        kv = try SettingsReplica(home: home, config: config, keyring: engine.keyring, logger: logger)
        let (e, k) = (engine, kv)
        service = DeviceService(engine: engine, kv: kv) { await Self.takeNewerKeys(engine: e, kv: k, home: home, logger: logger) }
        self.home = home
        self.logger = logger
    }

    /// Starts syncing files and settings continuously; on an encrypted account, picks up a key
    /// another device rolled now, and whenever the account's keys change or the push channel
    /// comes back (a roll while this device was away).
    public func start() async {
        let kv = self.kv
        let encrypted = engine.keyring != nil
        await engine.addPushListener { [weak self] m in
            if m.kind == .kv || m.kind == .hello { Task { await kv.synchronize() } }
            if encrypted, m.kind == .keys || m.kind == .hello { Task { await self?.refreshKeys() } }
        }
        await engine.start()
        Task { await kv.synchronize() }
        if encrypted { Task { await self.refreshKeys() } }
    }

    /// Takes a newer generation of the account key the server relays for this device (sealed
    /// to its key by the device that rolled it): the engine and the settings replica seal with
    /// it from now on, and the config keeps it. True when there was one.
    @discardableResult
    public func refreshKeys() async -> Bool { await Self.takeNewerKeys(engine: engine, kv: kv, home: home, logger: logger) }

    static func takeNewerKeys(engine: SyncEngine, kv: SettingsReplica, home: DeviceHome, logger: Logger) async -> Bool {
        let config = engine.config
        guard let keyring = engine.keyring, let key = config.deviceAgreementKey(), let held = try? config.keyring() else { return false }
        do {
            // Another container's engine may have taken a newer one into the config already.
            let saved = (try? DeviceConfig.load(home)).flatMap { $0 }.flatMap { try? $0.keyring() }
            let base = saved.map { $0.holds(held) ? $0 : held } ?? held
            let service = AccountKeyService(client: config.apiClient, user: config.user)
            let all = try await config.apiClient.accountKeys()
            engine.joining.names = AccountKeyService.waiting(in: all).map { String($0.prefix(64)) }
            let newer = try await service.newerRing(than: base, holder: DeviceEnrolment.holder(config.deviceID), key: key, in: all) ?? base
            guard keyring.update(newer) else { return false }
            if var c = try DeviceConfig.load(home), (try? c.keyring())?.holds(newer) != true {
                c.accountKey = newer.text
                try c.save(home)
            }
            logger.info("the account's key was rolled: sealing with epoch \(newer.current.epoch) from now on")
            await engine.requestPass()
            await kv.synchronize()
            return true
        } catch {
            logger.warning("could not take the account's new key: \(error)")
            return false
        }
    }

    /// One look at the server and the folder without starting anything (one-shot commands).
    public func refresh() async {
        if engine.keyring != nil { await refreshKeys() }  // what it writes is sealed with the newest key
        _ = await engine.peek()
        await kv.synchronize()
    }

    public func stop() async { await engine.stop() }
}
