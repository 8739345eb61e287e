import Foundation
import UbiqCore
import UbiqDaemonProtocol

/// Answers ``DeviceRequest``s against one engine: the same code serves the daemon's socket and
/// commands that run the engine in-process.
public struct DeviceService: Sendable {
    public let engine: SyncEngine
    public let kv: SettingsReplica
    /// Takes a newer generation of an encrypted account's key the server relays for this
    /// device; true when there was one (`rekey` seals with the newest).
    let takeNewerKeys: @Sendable () async -> Bool

    public init(engine: SyncEngine, kv: SettingsReplica, takeNewerKeys: @escaping @Sendable () async -> Bool = { false }) {
        self.engine = engine
        self.kv = kv
        self.takeNewerKeys = takeNewerKeys
    }

    /// Sends stream events through `emit` (which returns false once the listener has gone) and
    /// returns the final answer.
    public func handle(_ request: DeviceRequest, emit: @escaping @Sendable (DeviceResponse) async -> Bool = { _ in false }) async -> DeviceResponse {
        do {
            switch request {
            case .hello:
                var r = DeviceResponse(ok: true)
                r.hello = hello
                return r
            case .watchIdentity:
                var r = DeviceResponse(ok: true)
                r.hello = hello
                r.ready = true
                guard await emit(r) else { return DeviceResponse(ok: true) }
                while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
                return DeviceResponse(ok: true)
            case .coordinate(let paths, let writing):
                let rels = try paths.map(RelativePath.init(validating:))
                guard !rels.isEmpty, rels.count <= 1000 else { return DeviceResponse(ok: false, message: "coordinate 1 to 1,000 paths") }
                let tokens = rels.map { engine.coordination.enter($0.string, writing: writing) }
                var r = DeviceResponse(ok: true)
                r.ready = true
                if await emit(r) {
                    while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
                }
                for t in tokens { engine.coordination.leave(t) }
                await engine.requestPass()
                return DeviceResponse(ok: true)
            case .containers:
                // One engine in this process: its own container (a daemon answers for all).
                let s = await engine.status()
                var r = DeviceResponse(ok: true)
                r.containers = engine.config.containers.map { id in
                    ContainerState(id: id.string, folder: engine.home.containerFolder(id).path, isDefault: id == engine.config.container,
                                   state: id == engine.config.container ? s.state.rawValue : "stopped", idle: id == engine.config.container && s.idle)
                }
                return r
            case .kvSync:
                let synced = await kv.synchronize()
                var r = DeviceResponse(ok: true)
                r.savedLocally = !synced
                r.message = synced ? nil : await kv.lastError
                return r
            case .status:
                return DeviceResponse(ok: true, status: await engine.status())
            case .sync:
                await engine.syncNow()
                let s = await engine.status()
                if s.paused == true { return DeviceResponse(ok: false, message: "syncing is paused (ubiq resume, or P in the front end, resumes it)", status: s) }
                var r = DeviceResponse(ok: s.idle, message: s.idle ? nil : Self.describe(s), status: s)
                if s.state == .offline { r.code = ErrorCode.serverUnreachable.rawValue }
                return r
            case .list(let spec):
                var r = DeviceResponse(ok: true)
                r.items = try await engine.query(spec)
                return r
            case .watch(let spec):
                try await engine.watch(spec, emit: emit)
                return DeviceResponse(ok: true)
            case .versions(let path):
                var r = DeviceResponse(ok: true)
                r.versions = try await engine.versions(of: try RelativePath(validating: path))
                return r
            case .resolve(let path, let keep):
                guard let v = VersionID(string: keep) else { return DeviceResponse(ok: false, message: "'\(keep)' is not a version ID (see 'ubiq versions PATH')") }
                var r = DeviceResponse(ok: true)
                r.item = try await engine.resolve(try RelativePath(validating: path), keep: v)
                return r
            case .rename(let path, let name):
                let to = try await engine.renameItem(try RelativePath(validating: path), to: name)
                var r = DeviceResponse(ok: true)
                r.results = [PathResult(path: to.string)]
                return r
            case .makeFolder(let path):
                try await engine.makeFolder(try RelativePath(validating: path))
                return DeviceResponse(ok: true)
            case .mergeDraft(let path, let version):
                var conflict: VersionID?
                if let version {
                    guard let v = VersionID(string: version) else { return DeviceResponse(ok: false, message: "'\(version)' is not a version ID (see 'ubiq versions PATH')") }
                    conflict = v
                }
                var r = DeviceResponse(ok: true)
                r.merge = try await engine.mergeDraft(try RelativePath(validating: path), conflict: conflict)
                return r
            case .keepMerge(let draft, let text):
                var r = DeviceResponse(ok: true)
                r.item = try await engine.keepMerge(draft, text: text)
                return r
            case .keepBoth(let path):
                let made = try await engine.keepBoth(try RelativePath(validating: path))
                var r = DeviceResponse(ok: true)
                r.results = made.map { PathResult(path: $0.string) }
                return r
            case .download(let paths):
                return Self.results(await engine.download(try paths.map(RelativePath.init(validating:))))
            case .evict(let paths):
                return Self.results(await engine.evict(try paths.map(RelativePath.init(validating:))))
            case .cancel(let paths):
                return Self.results(await engine.cancelTransfers(try paths.map(RelativePath.init(validating:))))
            case .rekey:
                _ = await takeNewerKeys()
                var report = try await engine.rekey()
                report.settings = try await kv.rekey()
                var r = DeviceResponse(ok: report.absent == 0 && report.left == 0, message: Self.describe(report))
                if !r.ok { r.code = ErrorCode.invalidRequest.rawValue }
                return r
            case .devices:
                var r = DeviceResponse(ok: true)
                r.devices = try await engine.config.apiClient.devices()
                return r
            case .approveDevice(let code):
                let config = engine.config
                // The config on disk holds the newest ring (a roll taken since this engine started).
                guard let ring = try (DeviceConfig.load(engine.home) ?? config).keyring() else {
                    return DeviceResponse(ok: false, message: "this account is not encrypted end to end: a new device needs no approval")
                }
                let (name, device) = try await AccountKeyService(client: config.apiClient, user: config.user).approve(code: code, ring: ring)
                engine.joining.names.removeAll { $0 == String(name.prefix(64)) }
                return DeviceResponse(ok: true, message: "approved \(name) (\(device)): it now holds the account's key")
            case .pin(let paths, let on):
                return Self.results(await engine.pin(try paths.map(RelativePath.init(validating:)), on))
            case .hold(let paths, let on):
                return Self.results(await engine.hold(try paths.map(RelativePath.init(validating:)), on))
            case .pause(let on):
                await engine.setPaused(on)
                return DeviceResponse(ok: true, message: on ? "syncing paused (ubiq resume, or P, resumes it)" : "syncing resumed")
            case .retry(let paths):
                let n = await engine.retry(try paths.map(RelativePath.init(validating:)))
                return DeviceResponse(ok: true, message: n == 0 ? "nothing was waiting to be tried again" : "trying \(Counted.of(n, "item")) again now")
            case .remove(let paths):
                return Self.results(await engine.remove(try paths.map(RelativePath.init(validating:))))
            case .trash:
                var r = DeviceResponse(ok: true)
                r.trash = try await engine.trash()
                return r
            case .emptyTrash:
                var r = DeviceResponse(ok: true)
                r.emptied = try await engine.emptyTrash()
                return r
            case .restore(let path):
                var r = DeviceResponse(ok: true)
                r.item = try await engine.restore(try RelativePath(validating: path))
                return r
            case .kvList:
                var r = DeviceResponse(ok: true)
                r.kv = await kv.allEntries()
                return r
            case .kvGet(let key):
                // An absent key is an answer, not a failure: no entries (programs branched on
                // the refusal's text to tell it from a real one: #38 §4).
                var r = DeviceResponse(ok: true)
                r.kv = await kv.entry(forKey: key).map { [$0] } ?? []
                return r
            case .kvHistory(let key):
                var r = DeviceResponse(ok: true)
                r.kv = try await kv.history(forKey: key)
                r.devices = try? await engine.config.apiClient.devices()
                return r
            case .kvSet(let values, let origin):
                try await kv.setValues(values, origin: origin)
                let synced = await kv.synchronize()
                var r = DeviceResponse(ok: true)
                r.savedLocally = !synced
                r.message = synced ? nil : await kv.lastError
                return r
            case .versionContent(let path, let version, let limit, let offset):
                guard let v = VersionID(string: version) else { return DeviceResponse(ok: false, message: "'\(version)' is not a version ID") }
                var r = DeviceResponse(ok: true)
                r.content = Data(try await engine.versionContent(try RelativePath(validating: path), version: v, limit: max(0, min(limit, 1 << 20)), offset: max(0, offset ?? 0)))
                return r
            case .kvWatch(let local):
                let stream = local == nil ? await kv.changes() : await kv.changes(includingLocalWritesExcept: local)
                var ready = DeviceResponse(ok: true)
                ready.ready = true
                guard await emit(ready) else { return DeviceResponse(ok: true) }
                await kv.synchronize()
                for await c in stream {
                    var r = DeviceResponse(ok: true)
                    r.kvChange = c
                    if !(await emit(r)) { break }
                }
                return DeviceResponse(ok: true)
            }
        } catch {
            return .failure(error)
        }
    }

    /// Who this device is (the answer to `hello`).
    var hello: DaemonHello {
        let c = engine.config
        return DaemonHello(version: DaemonWire.protocolVersion, container: c.container.string, folder: engine.folder.path, server: c.server,
                           user: c.user, device: c.deviceID.description, deviceName: c.deviceName,
                           identity: DaemonHello.identity(server: c.server, user: c.user))
    }

    static func results(_ results: [PathResult]) -> DeviceResponse {
        let failed = results.filter { $0.error != nil }
        var r = DeviceResponse(ok: failed.isEmpty, message: failed.first?.error)
        r.results = results
        return r
    }

    /// Why a device is not in sync, in one line.
    /// One line for `ubiq rekey`: what was sealed again, and what is left and why.
    public static func describe(_ r: RekeyReport) -> String {
        var parts = ["sealed \(Counted.of(r.resealed, "document")) and \(Counted.of(r.settings, "setting")) again with the account's key of epoch \(r.epoch)"
            + (r.current > 0 ? " (\(Counted.of(r.current, "document")) already were)" : "")]
        if r.absent > 0 { parts.append("\(Counted.of(r.absent, "document")) \(r.absent == 1 ? "is" : "are") not on this device (on demand or evicted): 'ubiq download' them, or run 'ubiq rekey' on a device that holds them") }
        if r.left > 0 { parts.append("\(Counted.of(r.left, "document")) changed while it ran or could not be sent ('ubiq status' says why): run 'ubiq rekey' again") }
        return parts.joined(separator: "; ")
    }

    public static func describe(_ s: EngineStatus) -> String {
        if s.state == .offline { return "offline: \(s.lastError ?? "cannot reach the server")" }
        let n = s.uploads.queued + s.uploads.running + s.downloads.queued + s.downloads.running
        return n > 0 ? "not in sync: \(Counted.of(n, "transfer")) left" : "not in sync yet: \(s.lastError ?? "changes still settling")"
    }
}
