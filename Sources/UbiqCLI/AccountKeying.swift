import Crypto
import Foundation
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine

/// What `ubiq login` does about an account's end-to-end encryption, once the server let the
/// device in: make the keys (`--encrypted`), open them with the recovery key
/// (`--recovery-key`), keep the ones this device had, or refuse a device that would sync an
/// encrypted account without its key.
struct AccountKeying {
    let client: UbiqAPIClient
    let user: String
    let container: ContainerID
    /// This device (its ID names its request to join) and its name (shown where it is approved).
    let device: DeviceID
    let deviceName: String
    /// How long to wait for a trusted device's approval (0: do not ask for one).
    let approvalWait: Int

    /// The sealed key kept under the recovery key.
    static let recoveryName = "recovery"

    /// What a device keeps: every generation of the account key (nil: a plain account), its
    /// own X25519 key (on the account's device list), and the recovery key to show (only when
    /// one was just made).
    struct Kept {
        var ring: AccountKeyring?
        var deviceKey: Curve25519.KeyAgreement.PrivateKey?
        var recovery: RecoveryKey?
    }

    var service: AccountKeyService { AccountKeyService(client: client, user: user) }
    var holder: String { DeviceEnrolment.holder(device) }

    func entry(_ key: Curve25519.KeyAgreement.PrivateKey) -> DeviceKeyList.Entry {
        DeviceKeyList.Entry(holder: holder, publicKey: key.publicKey.rawRepresentation, name: deviceName)
    }

    /// The keys this device keeps once it is in: made (`--encrypted`), opened with the recovery
    /// key, kept from before, or granted by a trusted device; and this device on the account's
    /// device list. Refuses a device that would sync an encrypted account without its key.
    func keys(encrypt: Bool, recoveryKey typed: String?, kept: DeviceConfig?) async throws -> Kept {
        let all = try await mapClient { try await client.accountKeys() }
        let sealed = all[Self.recoveryName]
        if encrypt {
            guard sealed == nil else {
                throw CLIError(.pathExists, "\(user) is already encrypted end to end; sign in with --recovery-key (or without it on a device that holds the key)")
            }
            let page = try await mapClient { try await client.changes(container, after: 0, limit: 1) }
            guard page.items.isEmpty else {
                throw CLIError(.invalidRequest, "\(user) already holds documents in \(container): sign in without --encrypted, then run 'ubiq encrypt' on a device that holds them all")
            }
            let ring = AccountKeyring(AccountKey.generate())
            let recovery = RecoveryKey.generate()
            do { try await client.putAccountKey(name: Self.recoveryName, value: recovery.seal(ring.current, user: user), replace: false) } catch let e as ClientError {
                throw CLIError(e.code, e.code == .pathExists ? "another device encrypted \(user) a moment ago; sign in with --recovery-key" : e.message)
            }
            let key = Curve25519.KeyAgreement.PrivateKey()
            try await listed([service.recoveryEntry(recovery), entry(key)], ring: ring)
            return Kept(ring: ring, deviceKey: key, recovery: recovery)
        }
        if let typed {
            guard sealed != nil else { throw CLIError(.invalidRequest, "\(user) is not encrypted end to end; sign in without --recovery-key") }
            let recovery: RecoveryKey
            do { recovery = try RecoveryKey(typed: typed) } catch let e as CoreError { throw CLIError(e.code, e.message) }
            let ring = try await core { try await service.recover(recovery) }
            let key = Curve25519.KeyAgreement.PrivateKey()
            try await listed([service.recoveryEntry(recovery), entry(key)], ring: ring)
            return Kept(ring: ring, deviceKey: key)
        }
        guard sealed != nil else { return Kept() }
        if let kept, let ring = try? kept.keyring() {
            let key = kept.deviceAgreementKey() ?? Curve25519.KeyAgreement.PrivateKey()
            if kept.deviceKey == nil { try await listed([entry(key)], ring: ring) }
            return Kept(ring: ring, deviceKey: key)
        }
        guard approvalWait > 0 else {
            throw CLIError(.keyMissing, "\(user) is encrypted end to end and this device has no key: approve it from a device that has (ubiq devices approve CODE), or sign in with --recovery-key KEY (the key printed when the account was encrypted)")
        }
        let (ring, key) = try await awaitApproval()
        if (try? await service.deviceList(ring))?.entry(holder)?.publicKey != key.publicKey.rawRepresentation {
            try await listed([entry(key)], ring: ring)  // an approver from before device lists
        }
        return Kept(ring: ring, deviceKey: key)
    }

    /// Puts `entries` on the account's device list (the recovery key's only when it is not there).
    func listed(_ entries: [DeviceKeyList.Entry], ring: AccountKeyring) async throws {
        do {
            try await core {
                for e in entries {
                    if e.holder == DeviceKeyList.recovery, try await service.deviceList(ring)?.entry(e.holder) != nil { continue }
                    try await service.register(e, ring: ring)
                }
            }
        } catch let e as CLIError where e.code == .keyMissing {
            // The list is of a generation this ring lacks: the recovery key was not on it when
            // the key rolled. This device reads what its ring opens; approving it from a device
            // that holds the newest key lists it.
            print("warning: \(e.message); approve this device from one that holds the newest key to read what was written since")
        }
    }

    /// Leaves a request to join with the server, shows its code, and waits for a trusted
    /// device's grant (polling the server, at most `approvalWait` seconds). The request's key
    /// becomes this device's key.
    func awaitApproval() async throws -> (AccountKeyring, Curve25519.KeyAgreement.PrivateKey) {
        let request = DeviceEnrolment.Request(deviceName: deviceName)
        let (requestName, grantName) = (DeviceEnrolment.requestName(device), DeviceEnrolment.grantName(device))
        try await mapClient {
            try? await client.deleteAccountKey(name: grantName)  // one from an earlier attempt was sealed to another key
            try await client.putAccountKey(name: requestName, value: request.text, replace: true)
        }
        print("""
            \(user) is encrypted end to end. On a device that holds its key, run:

                ubiq devices approve \(request.code)

            (check that the code is the same there). Waiting up to \(approvalWait) s; or stop and sign in with --recovery-key KEY.
            """)
        fflush(nil)
        let deadline = ContinuousClock.now + .seconds(approvalWait)
        while ContinuousClock.now < deadline {
            if let grant = try await mapClient({ try await client.accountKeys() })[grantName] {
                try? await client.deleteAccountKey(name: requestName)
                try? await client.deleteAccountKey(name: grantName)
                do { return (try DeviceEnrolment.open(grant: grant, with: request.privateKey, user: user, device: device), request.privateKey) } catch let e as CoreError {
                    throw CLIError(e.code, e.message)
                }
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        try? await client.deleteAccountKey(name: requestName)
        throw CLIError(.keyMissing, "no device approved this one within \(approvalWait) s; sign in again to get a new code, or use --recovery-key KEY")
    }

    /// What the first device prints, once: the recovery key and what it is for.
    static func recoveryNotice(_ key: RecoveryKey, server: String, user: String) -> String {
        """
        this account is now encrypted end to end: the server keeps only sealed names and content.
        RECOVERY KEY (shown once, never stored by the server; write it down and keep it apart from this device):

            \(key.grouped)

        A new device signs in with: ubiq login \(server) --user \(user) --recovery-key \(key.grouped)
        Lose this key and every device, and the documents cannot be opened by anyone.
        """
    }
}

/// Maps client and core errors to one-line CLI errors.
func core<T>(_ body: () async throws -> T) async throws -> T {
    do { return try await mapClient(body) } catch let e as CoreError { throw CLIError(e.code, e.message) }
}
