import Foundation
import Logging
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol
import UbiqTransport

/// The synced key-value store of one account and store ID, in the spirit of
/// `NSUbiquitousKeyValueStore`: typed values, limits checked before anything is stored,
/// hybrid-logical-clock last-writer-wins, atomic multi-key sets, writes kept locally while
/// offline, and change notifications with a reason for changes made elsewhere.
public actor SettingsReplica {
    /// Why settings changed (``SettingsChangeReason``).
    public typealias ChangeReason = SettingsChangeReason
    /// One external change (``SettingsChange``).
    public typealias Change = SettingsChange

    public let storeID: ContainerID
    public let device: DeviceID
    let client: SettingsServer
    let state: KeyValueState
    let physicalMillis: @Sendable () -> Int64
    let logger: Logger
    /// Which account the cache belongs to (`user@server`).
    let account: String

    var entries: [String: KVEntry] = [:]
    var pending: Set<String> = []
    var hlc = HybridLogicalClock()
    var cursor: Int64 = 0
    var syncedOnce = false
    var accountChangedKeys: [String]?
    /// The keys of the first sync when nobody listened yet (a program that starts listening
    /// as the store is first synced — a container added by its request — still hears it).
    var unheardInitialKeys: [String]?
    var listeners: [UUID: @Sendable (Change) -> Void] = [:]
    /// Listeners that also hear this device's own writes, except those tagged with their origin.
    var localListeners: [UUID: (origin: String?, body: @Sendable (Change) -> Void)] = [:]
    var syncing = false
    var syncAgain = false
    var syncWaiters: [CheckedContinuation<Void, Never>] = []
    /// True after the last exchange with the server succeeded.
    public internal(set) var online = false
    public internal(set) var lastError: String?

    /// Opens the store's local cache for a signed-in device.
    /// - Parameter physicalMillis: the wall clock (milliseconds since 1970), injectable.
    /// - Parameter keyring: the engine's keys of the same container on an encrypted account
    ///   (shared, so a roll reaches both); nil: made from the config.
    public init(home: DeviceHome, config: DeviceConfig, storeID: ContainerID? = nil, keyring: SharedKeyring? = nil, logger: Logger = Logger(label: "ubiq.kv"),
                physicalMillis: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }) throws {
        let store = storeID ?? config.container
        self.storeID = store
        self.device = config.deviceID
        let keys = try keyring.flatMap { $0.container == store ? $0 : nil } ?? config.keyring().map { SharedKeyring($0, container: store) }
        self.client = SettingsServer(client: config.apiClient, keyring: keys)
        self.physicalMillis = physicalMillis
        self.logger = logger
        try PrivateDirectory.make(home.stateDirectory)
        self.state = try KeyValueState(path: home.keyValueDatabase(store).path)
        let loaded = try state.load()
        let account = "\(config.user)@\(config.server)"
        self.account = account
        if let previous = loaded.meta["account"], previous != account {
            // A cache of another account: never shown or synced under this one.
            accountChangedKeys = loaded.entries.values.filter { $0.value != nil }.map(\.key).sorted()
            try state.save([], pending: [], meta: ["account": account], wipe: true)
        } else {
            entries = loaded.entries
            pending = loaded.pending
            cursor = Int64(loaded.meta["cursor"] ?? "0") ?? 0
            syncedOnce = loaded.meta["synced"] == "1"
            if let w = loaded.meta["hlcWall"].flatMap(Int64.init), let c = loaded.meta["hlcCounter"].flatMap(UInt32.init) {
                hlc = HybridLogicalClock(last: HLCTimestamp(wallMillis: w, counter: c))
            }
            if loaded.meta["account"] == nil { try state.save([], pending: pending, meta: ["account": account]) }
        }
    }

    // MARK: reading

    /// The value for a key, or nil.
    public func value(forKey key: String) -> KVValue? { entries[key]?.value }

    /// The entry (value, stamp, writing device) for a key that has a value.
    public func entry(forKey key: String) -> KVEntry? { entries[key].flatMap { $0.value == nil ? nil : $0 } }

    /// Every key with a value, sorted by key.
    /// A key's last writes as the server keeps them, newest first (who, when, what; a delete
    /// has no value). Asks the server: an offline device has no history to show.
    public func history(forKey key: String) async throws -> [KVEntry] {
        try await client.history(storeID, key: key)
    }

    public func allEntries() -> [KVEntry] { entries.values.filter { $0.value != nil }.sorted { $0.key < $1.key } }

    /// Keys used and bytes used, against the limits of product §4.
    public func usage() -> (keys: Int, bytes: Int) {
        let live = entries.values.compactMap { e in e.value.map { (e.key, $0) } }
        return (live.count, live.reduce(0) { $0 + $1.0.utf8.count + $1.1.byteCount })
    }

    /// Keys written here and not yet acknowledged by the server.
    public func pendingKeys() -> [String] { pending.sorted() }

    // MARK: writing

    /// Sets one key (limits checked first; nothing stored on error).
    public func set(_ value: KVValue, forKey key: String) throws { try setValues([key: value]) }

    /// Removes one key.
    public func removeValue(forKey key: String) throws { try setValues([key: nil]) }

    /// Sets and removes (nil) several keys at once: every device sees all of them or none.
    /// `origin` tags the writing program: listeners of local writes hear the change unless it is theirs.
    public func setValues(_ changes: [String: KVValue?], origin: String? = nil) throws {
        guard !changes.isEmpty else { return }
        for (k, v) in changes { try KVLimits.check(key: k, value: v) }
        var after: [String: KVValue] = [:]
        for (k, e) in entries { if let v = e.value { after[k] = v } }
        for (k, v) in changes { after[k] = v }
        try KVLimits.check(store: after)
        var clock = hlc
        let stamp = clock.now(physicalMillis: physicalMillis())
        let written = changes.map { KVEntry(key: $0.key, value: $0.value, stamp: stamp, device: device) }
        var newPending = pending
        for e in written { newPending.insert(e.key) }
        try state.save(written, pending: newPending, meta: clockMeta(clock))
        hlc = clock
        pending = newPending
        for e in written { entries[e.key] = e }
        let c = Change(reason: .localChange, keys: changes.keys.sorted())
        for l in localListeners.values where origin == nil || l.origin != origin { l.body(c) }
    }

    func clockMeta(_ c: HybridLogicalClock) -> [String: String] {
        ["hlcWall": String(c.last.wallMillis), "hlcCounter": String(c.last.counter)]
    }

    // MARK: notifications

    /// Registers a callback for external changes (never for this device's own writes).
    public func addListener(_ body: @escaping @Sendable (Change) -> Void) -> UUID {
        let id = UUID()
        listeners[id] = body
        if let keys = accountChangedKeys {
            accountChangedKeys = nil
            body(Change(reason: .accountChange, keys: keys))
        }
        if let keys = unheardInitialKeys {
            unheardInitialKeys = nil
            body(Change(reason: .initialSyncChange, keys: keys))
        }
        return id
    }

    public func removeListener(_ id: UUID) { listeners[id] = nil; localListeners[id] = nil }

    /// External changes and this device's own writes made by other programs (`localChange`;
    /// writes tagged `origin` are the listener's own and are left out), as a stream.
    public func changes(includingLocalWritesExcept origin: String?) -> AsyncStream<Change> {
        let (stream, cont) = AsyncStream<Change>.makeStream()
        let id = addListener { cont.yield($0) }
        localListeners[id] = (origin, { cont.yield($0) })
        cont.onTermination = { _ in Task { await self.removeListener(id) } }
        return stream
    }

    /// External changes as a stream (ends when the task reading it is cancelled).
    public func changes() -> AsyncStream<Change> {
        let (stream, cont) = AsyncStream<Change>.makeStream()
        let id = addListener { cont.yield($0) }
        cont.onTermination = { _ in Task { await self.removeListener(id) } }
        return stream
    }

    func notify(_ reason: ChangeReason, _ keys: Set<String>) {
        guard !keys.isEmpty else { return }
        let c = Change(reason: reason, keys: keys.sorted())
        if reason == .initialSyncChange && listeners.isEmpty { unheardInitialKeys = c.keys }
        for l in listeners.values { l(c) }
    }
}

extension DeviceHome {
    /// The key-value cache of one store.
    public func keyValueDatabase(_ store: ContainerID) -> URL { stateDirectory.appendingPathComponent("kv-\(store.string).sqlite") }
}
