import Foundation

/// Every generation of an end-to-end encrypted account's key a device holds, oldest first.
///
/// Revoking a device rolls a new generation (`rolled()`): new content, version records and
/// setting values are sealed with the newest key, which the revoked device never sees; what
/// was sealed before keeps opening with the key it was sealed with. The first key stays the
/// account's **identity** key — names and setting keys are sealed with it, so the same name
/// seals to the same token on every device whichever generation it holds (the server's
/// collisions, moves and last-writer-wins depend on that; `ThreatModel.md` says what a revoked
/// device can still read).
public struct AccountKeyring: Sendable, Equatable {
    /// The keys, oldest first; epochs strictly increasing.
    public let keys: [AccountKey]

    /// The most generations one ring holds (a ring is relayed sealed in one server entry).
    public static let maxKeys = 64

    /// A ring of `keys` (any order); `invalid_value` when empty, too long or with an epoch twice.
    public init(_ keys: [AccountKey]) throws {
        let sorted = keys.sorted { $0.epoch < $1.epoch }
        guard !sorted.isEmpty, sorted.count <= Self.maxKeys else {
            throw CoreError(.invalidValue, "a keyring holds 1 to \(Self.maxKeys) keys, not \(keys.count)")
        }
        guard Set(sorted.map(\.epoch)).count == sorted.count else { throw CoreError(.invalidValue, "a keyring holds one key per epoch") }
        self.keys = sorted
    }

    /// A ring of the one key.
    public init(_ key: AccountKey) { keys = [key] }

    /// The newest key: what anything sealed from now on is sealed with.
    public var current: AccountKey { keys[keys.count - 1] }

    /// The first key: names and setting keys are sealed with it.
    public var identity: AccountKey { keys[0] }

    /// The key of `epoch`, if this ring holds it.
    public func key(epoch: Int) -> AccountKey? { keys.first { $0.epoch == epoch } }

    /// This ring with a new random key one epoch past the newest.
    public func rolled() -> AccountKeyring { try! AccountKeyring(keys + [AccountKey.generate(epoch: current.epoch + 1)]) }

    /// True when this ring holds every key `other` holds (the same bytes at each epoch).
    public func holds(_ other: AccountKeyring) -> Bool { other.keys.allSatisfy { key(epoch: $0.epoch) == $0 } }

    /// One key per line (`AccountKey.text`), as a device keeps it in its config.
    public var text: String { keys.map(\.text).joined(separator: "\n") }

    /// Reads `text`'s form back (a single key's text is a ring of one); `invalid_value` otherwise.
    public init(text: String) throws {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard lines.count <= Self.maxKeys else { throw CoreError(.invalidValue, "a keyring holds at most \(Self.maxKeys) keys") }
        try self.init(try lines.map { try AccountKey(text: $0) })
    }

    /// The keys of one container, every generation.
    public func keys(for container: ContainerID) -> ContainerKeyring {
        ContainerKeyring(byEpoch: keys.map { $0.keys(for: container) })
    }
}

/// The keys of one container of an encrypted account, every generation the device holds.
public struct ContainerKeyring: Sendable {
    /// Oldest first.
    let byEpoch: [ContainerKeys]

    init(byEpoch: [ContainerKeys]) { self.byEpoch = byEpoch }

    /// A ring of one generation's keys.
    public init(_ keys: ContainerKeys) { byEpoch = [keys] }

    /// The newest keys: what is sealed from now on.
    public var current: ContainerKeys { byEpoch[byEpoch.count - 1] }
    /// The first keys: names and setting keys are sealed with them.
    public var identity: ContainerKeys { byEpoch[0] }
    /// Newest first.
    public var newestFirst: [ContainerKeys] { byEpoch.reversed() }
    /// The epochs held, oldest first.
    public var epochs: [Int] { byEpoch.map(\.epoch) }

    /// The keys of `epoch`; `key_missing` when this device does not hold them (a key rolled
    /// since it last looked, or one it was revoked before).
    public func keys(epoch: Int) throws -> ContainerKeys {
        guard let k = byEpoch.first(where: { $0.epoch == epoch }) else {
            throw CoreError(.keyMissing, "this was sealed with the account's key of epoch \(epoch), which this device does not hold (it holds \(epochs.map(String.init).joined(separator: ", ")))")
        }
        return k
    }
}

/// A container's keyring that changes while a device runs: when another device rolls the
/// account's key, the engine, its chunk naming and the settings replica all see the new one
/// at once. Reads take a lock for an instant; the ring itself is immutable.
public final class SharedKeyring: @unchecked Sendable {
    private let lock = NSLock()
    private var ring: ContainerKeyring
    /// The container the ring is of.
    public let container: ContainerID

    public init(_ ring: AccountKeyring, container: ContainerID) {
        self.container = container
        self.ring = ring.keys(for: container)
    }

    public init(_ ring: ContainerKeyring, container: ContainerID) {
        self.container = container
        self.ring = ring
    }

    /// The ring as it is now.
    public var keys: ContainerKeyring { lock.withLock { ring } }

    /// Takes `newer` when it holds a newer key than the ring has; true when it did.
    @discardableResult
    public func update(_ newer: AccountKeyring) -> Bool {
        let next = newer.keys(for: container)
        return lock.withLock {
            guard next.current.epoch > ring.current.epoch else { return false }
            ring = next
            return true
        }
    }
}
