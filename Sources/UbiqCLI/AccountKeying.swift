import Foundation
import UbiqClient
import UbiqCore

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

    /// The account key to keep in the config (nil: a plain account) and the recovery key to
    /// show (only when one was just made).
    func keys(encrypt: Bool, recoveryKey typed: String?, kept: String?) async throws -> (String?, RecoveryKey?) {
        let sealed = try await mapClient { try await client.accountKeys() }[Self.recoveryName]
        if encrypt {
            guard sealed == nil else {
                throw CLIError(.pathExists, "\(user) is already encrypted end to end; sign in with --recovery-key (or without it on a device that holds the key)")
            }
            let page = try await mapClient { try await client.changes(container, after: 0, limit: 1) }
            guard page.items.isEmpty else {
                throw CLIError(.invalidRequest, "\(user) already holds documents in \(container); an account is encrypted before its first document")
            }
            let key = AccountKey.generate()
            let recovery = RecoveryKey.generate()
            do { try await client.putAccountKey(name: Self.recoveryName, value: recovery.seal(key, user: user), replace: false) } catch let e as ClientError {
                throw CLIError(e.code, e.code == .pathExists ? "another device encrypted \(user) a moment ago; sign in with --recovery-key" : e.message)
            }
            return (key.text, recovery)
        }
        if let typed {
            guard let sealed else { throw CLIError(.invalidRequest, "\(user) is not encrypted end to end; sign in without --recovery-key") }
            do { return (try RecoveryKey(typed: typed).open(sealed, user: user).text, nil) } catch let e as CoreError { throw CLIError(e.code, e.message) }
        }
        guard sealed != nil else { return (nil, nil) }
        if let kept, (try? AccountKey(text: kept)) != nil { return (kept, nil) }
        guard approvalWait > 0 else {
            throw CLIError(.keyMissing, "\(user) is encrypted end to end and this device has no key: approve it from a device that has (ubiq devices approve CODE), or sign in with --recovery-key KEY (the key printed when the account was encrypted)")
        }
        return (try await awaitApproval().text, nil)
    }

    /// Leaves a request to join with the server, shows its code, and waits for a trusted
    /// device's grant (polling the server, at most `approvalWait` seconds).
    func awaitApproval() async throws -> AccountKey {
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
                do { return try DeviceEnrolment.open(grant: grant, with: request.privateKey, user: user, device: device) } catch let e as CoreError {
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
