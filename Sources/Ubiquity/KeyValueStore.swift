import Foundation
import UbiqDaemonProtocol

/// The account's synced settings, as `NSUbiquitousKeyValueStore`: typed values under string
/// keys, written at once on this device and sent to the others (the last write wins per key);
/// `changes()` reports what others changed, with the reason and the keys.
///
/// ```swift
/// let settings = KeyValueStore()
/// try await settings.set(.string("dark"), forKey: "theme")
/// for try await change in settings.changes() where change.keys.contains("theme") { … }
/// ```
public final class KeyValueStore: Sendable {
    /// Why values changed (as `NSUbiquitousKeyValueStoreChangeReasonKey`).
    public enum Reason: String, Sendable, Equatable {
        case serverChange, initialSyncChange, quotaViolationChange, accountChange
    }

    /// One change made elsewhere: why, and which keys.
    public struct Change: Sendable, Equatable {
        public let reason: Reason
        public let keys: [String]
    }

    /// The store's ID (a container's ID; the device starts syncing that container if it did
    /// not); nil: the device's first container's.
    public let storeID: String?
    let ubiquity: Ubiquity

    public init(_ storeID: String? = nil, ubiquity: Ubiquity = .standard) {
        self.storeID = storeID
        self.ubiquity = ubiquity
    }

    /// The daemon's answer for this store.
    func ask(_ request: DeviceRequest, onEvent: @escaping @Sendable (DeviceResponse) async -> Bool = { _ in true }) async throws -> DeviceResponse {
        try await ubiquity.ask(request, container: try storeContainer(), onEvent: onEvent)
    }

    /// The container the store belongs to (nil: the device's first).
    func storeContainer() throws -> ContainerID? {
        guard let storeID else { return nil }
        do { return try ContainerID(validating: storeID) } catch {
            throw UbiquityError(.notInContainer, "'\(storeID)' is not a store ID (a container ID: letters, digits, . _ -)")
        }
    }

    /// The value of `key`, or nil.
    public func value(forKey key: String) async throws -> KVValue? {
        try await ask(.kvGet(key: key)).kv?.first?.value
    }

    public func string(forKey key: String) async throws -> String? {
        if case .string(let s)? = try await value(forKey: key) { return s }
        return nil
    }

    public func int(forKey key: String) async throws -> Int64? {
        if case .int(let i)? = try await value(forKey: key) { return i }
        return nil
    }

    public func double(forKey key: String) async throws -> Double? {
        switch try await value(forKey: key) {
        case .double(let d)?: return d
        case .int(let i)?: return Double(i)
        default: return nil
        }
    }

    public func bool(forKey key: String) async throws -> Bool? {
        if case .bool(let b)? = try await value(forKey: key) { return b }
        return nil
    }

    public func data(forKey key: String) async throws -> Data? {
        if case .data(let d)? = try await value(forKey: key) { return d }
        return nil
    }

    public func date(forKey key: String) async throws -> Date? {
        if case .date(let d)? = try await value(forKey: key) { return d }
        return nil
    }

    /// Every key and its value.
    public func dictionaryRepresentation() async throws -> [String: KVValue] {
        var out: [String: KVValue] = [:]
        for e in try await ask(.kvList).kv ?? [] { if let v = e.value { out[e.key] = v } }
        return out
    }

    /// Writes one value (nil removes the key). Returns false when it is kept on this device
    /// only for now (the server could not be reached; it is sent later by itself).
    @discardableResult
    public func set(_ value: KVValue?, forKey key: String) async throws -> Bool {
        try await set([key: value])
    }

    /// Writes several keys at once: every device sees all of them or none (nil removes).
    @discardableResult
    public func set(_ values: [String: KVValue?]) async throws -> Bool {
        try await ask(.kvSet(values: values, origin: nil)).savedLocally != true
    }

    @discardableResult
    public func removeObject(forKey key: String) async throws -> Bool { try await set([key: nil]) }

    /// Sends what this device wrote and fetches what others wrote, now. False when the
    /// server could not be reached.
    @discardableResult
    public func synchronize() async throws -> Bool {
        try await ask(.kvSync).savedLocally != true
    }
}
