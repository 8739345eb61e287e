import Crypto
import Foundation
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol

/// What a device of an end-to-end encrypted account does with the account's keys on the
/// server: keep itself on the device list, roll a new generation when a device is revoked, pick
/// up a generation another device rolled, and open every generation with the recovery key.
///
/// The server relays only sealed things (`account_keys`): `recovery` (the first key under the
/// recovery key), `devices` (`DeviceKeyList`, authenticated with the account key),
/// `keyring.<holder>` (the whole ring sealed to that holder's X25519 key, after a roll), and the
/// enrolment's `enrol.*` / `grant.*`.
public struct AccountKeyService: Sendable {
    public let client: UbiqAPIClient
    public let user: String

    public init(client: UbiqAPIClient, user: String) {
        self.client = client
        self.user = user
    }

    /// The sealed-key name of `holder`'s ring.
    public static func keyringName(_ holder: String) -> String { "keyring.\(holder)" }

    /// The account's device list checked with `ring` (nil: the account has none yet — it was
    /// encrypted before lists existed).
    public func deviceList(_ ring: AccountKeyring, in all: [String: String]? = nil) async throws -> DeviceKeyList? {
        return try await keys(all)[DeviceKeyList.serverName].map { try DeviceKeyList(text: $0, ring: ring) }
    }

    /// `all` when the caller has read the account's sealed keys already, else read now.
    func keys(_ all: [String: String]?) async throws -> [String: String] {
        if let all { return all }
        return try await client.accountKeys()
    }

    /// Puts `entry` on the device list (making one when there is none), authenticated with the
    /// ring's newest key.
    public func register(_ entry: DeviceKeyList.Entry, ring: AccountKeyring) async throws {
        try await changeList(ring) { list in try list.with(entry) }
    }

    /// What a roll did.
    public struct Rolled: Sendable {
        /// The ring with its new generation.
        public let ring: AccountKeyring
        /// The holders it was sealed to (devices' IDs, and `recovery`).
        public let sealedTo: [String]
    }

    /// Rolls a new generation of the account key: sealed to every holder on the device list but
    /// `revoking` (and `me`, listed if it was not), the list rewritten under the new key, and
    /// everything left for the revoked holder removed. The device keeps the returned ring.
    public func roll(_ ring: AccountKeyring, revoking: String?, me: DeviceKeyList.Entry) async throws -> Rolled {
        let next = ring.rolled()
        var sealed: [String: Data] = [:]  // holder → the public key its ring was sealed to
        let list = try await changeList(ring, writingWith: next) { list in
            var l = list
            if let revoking { l = l.without(revoking) }
            l = try l.with(me)
            // A holder listed meanwhile (approved while this rolled) gets the new ring too.
            for e in l.entries where sealed[e.holder] != e.publicKey {
                guard let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: e.publicKey) else { continue }
                let box = try DeviceEnrolment.seal(next.text, to: key, user: user, holder: e.holder)
                try await client.putAccountKey(name: Self.keyringName(e.holder), value: box, replace: true)
                sealed[e.holder] = e.publicKey
            }
            return l
        }
        if let revoking {
            let all = try await client.accountKeys()
            for name in [Self.keyringName(revoking), "grant.\(revoking)", "enrol.\(revoking)"] where all[name] != nil {
                try? await client.deleteAccountKey(name: name)
            }
        }
        return Rolled(ring: next, sealedTo: list.entries.map(\.holder))
    }

    /// Read-modify-write of the device list, authenticated with `writingWith` (default: `ring`):
    /// the write replaces only the list it read, so two devices changing it at once (an approval
    /// and a roll) both land — the loser reads again and redoes its change.
    @discardableResult
    func changeList(_ ring: AccountKeyring, writingWith out: AccountKeyring? = nil,
                    _ change: (DeviceKeyList) async throws -> DeviceKeyList) async throws -> DeviceKeyList {
        let out = out ?? ring
        for _ in 0..<8 {
            let current = try await client.accountKeys()[DeviceKeyList.serverName]
            let read = try current.map { try DeviceKeyList(text: $0, ring: out) } ?? DeviceKeyList(epoch: ring.current.epoch, entries: [])
            var list = try await change(read)
            list.epoch = out.current.epoch
            do {
                try await client.putAccountKey(name: DeviceKeyList.serverName, value: try list.text(out), replace: current != nil, expecting: current)
                return list
            } catch let e as ClientError where e.code == .itemChanged || e.code == .pathExists {
                continue  // another device changed it meanwhile
            }
        }
        throw CoreError(.itemChanged, "the account's device list kept changing while this device changed it; try again")
    }

    /// A newer ring the server relays for `holder` (sealed to `key`'s public half by the device
    /// that rolled it), or nil when there is none. `tampered` when it does not open, or does not
    /// hold every key `ring` holds (a ring the server made up would not: it never saw them).
    public func newerRing(than ring: AccountKeyring, holder: String, key: Curve25519.KeyAgreement.PrivateKey,
                          in all: [String: String]? = nil) async throws -> AccountKeyring? {
        guard let sealed = try await keys(all)[Self.keyringName(holder)] else { return nil }
        let text = try DeviceEnrolment.open(sealed, with: key, user: user, holder: holder)
        guard let newer = try? AccountKeyring(text: text) else { throw CoreError(.tampered, "the account keys the server relayed for this device are damaged") }
        guard newer.current.epoch > ring.current.epoch else { return nil }
        guard newer.holds(ring) else { throw CoreError(.tampered, "the account keys the server relayed for this device do not hold the ones it has") }
        return newer
    }

    /// Every generation the recovery key opens: the first key (`recovery`), and the ring a roll
    /// sealed to the recovery key's X25519 key, if any. `bad_credentials` for another recovery key.
    public func recover(_ recovery: RecoveryKey) async throws -> AccountKeyring {
        let all = try await client.accountKeys()
        guard let sealed = all["recovery"] else { throw CoreError(.invalidRequest, "\(user) is not encrypted end to end; sign in without --recovery-key") }
        let first = AccountKeyring(try recovery.open(sealed, user: user))
        guard let rolled = all[Self.keyringName(DeviceKeyList.recovery)] else { return first }
        let text = try DeviceEnrolment.open(rolled, with: recovery.agreementKey(user: user), user: user, holder: DeviceKeyList.recovery)
        guard let ring = try? AccountKeyring(text: text), ring.holds(first) else {
            throw CoreError(.tampered, "the account keys the server relayed for the recovery key are damaged")
        }
        return ring
    }

    /// The devices waiting to be let in (`ubiq login` showing a code): their names, as their
    /// requests give them.
    public static func waiting(in all: [String: String]) -> [String] {
        all.filter { $0.key.hasPrefix("enrol.") }.sorted { $0.key < $1.key }.compactMap { try? DeviceEnrolment.read(request: $0.value).deviceName }
    }

    /// Lets in the device whose request shows `code` (as a person types it): the ring sealed to
    /// its key, the device on the list. `invalid_value` for something that is not a code,
    /// `not_found` when no waiting device shows it (a request the server swapped shows another).
    public func approve(code: String, ring: AccountKeyring) async throws -> (name: String, device: DeviceID) {
        guard let wanted = DeviceEnrolment.normalized(code: code) else {
            throw CoreError(.invalidValue, "a code is 10 letters and digits (XXXXX-XXXXX), as the new device shows it")
        }
        for (name, value) in try await client.accountKeys().sorted(by: { $0.key < $1.key }) where name.hasPrefix("enrol.") {
            guard let request = try? DeviceEnrolment.read(request: value), DeviceEnrolment.code(of: request.publicKey.rawRepresentation) == wanted,
                  let device = DeviceID(string: String(name.dropFirst("enrol.".count))) else { continue }
            let grant = try DeviceEnrolment.grant(ring, to: value, user: user, device: device)
            try await register(DeviceKeyList.Entry(holder: DeviceEnrolment.holder(device), publicKey: request.publicKey.rawRepresentation, name: request.deviceName), ring: ring)
            try await client.putAccountKey(name: DeviceEnrolment.grantName(device), value: grant, replace: true)
            return (request.deviceName, device)
        }
        throw CoreError(.notFound, "no device is waiting with code \(wanted); check the code the new device shows (it waits while 'ubiq login' runs)")
    }

    /// A new X25519 key for a device, and its entry for the device list.
    public static func deviceKey(holder: String, name: String) -> (Curve25519.KeyAgreement.PrivateKey, DeviceKeyList.Entry) {
        let key = Curve25519.KeyAgreement.PrivateKey()
        return (key, DeviceKeyList.Entry(holder: holder, publicKey: key.publicKey.rawRepresentation, name: name))
    }

    /// The recovery key's entry for the device list.
    public func recoveryEntry(_ recovery: RecoveryKey) -> DeviceKeyList.Entry {
        DeviceKeyList.Entry(holder: DeviceKeyList.recovery, publicKey: recovery.agreementKey(user: user).publicKey.rawRepresentation, name: "recovery key")
    }
}

extension DeviceConfig {
    /// This device's X25519 key (`deviceKey`), if it has one.
    public func deviceAgreementKey() -> Curve25519.KeyAgreement.PrivateKey? {
        deviceKey.flatMap { Data(base64Encoded: $0) }.flatMap { try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
    }
}

/// The names of devices waiting to join an encrypted account, as last seen on the server.
public final class JoiningDevices: @unchecked Sendable {
    private let lock = NSLock()
    private var value: [String] = []
    public var names: [String] {
        get { lock.withLock { value } }
        set { lock.withLock { value = Array(newValue.prefix(16)) } }
    }
}
