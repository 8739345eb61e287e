import Foundation
import UbiqCore
import UbiqProtocol
import UbiqStorage

/// What `ubiq server user …` and `ubiq server device …` do. They run in their own process
/// against the same data folder as a running server: a revocation reaches that server's open
/// push channels through their periodic token check (`ServerServices.pushRecheck`).
extension ServerServices {
    public func users() async throws -> [AccountSummary] { try await admin.accounts() }

    /// A new password for `name`; with `signOut` every device must sign in again.
    public func setPassword(user name: String, password: String, signOut: Bool) async throws {
        try Self.validatePassword(password)
        guard try await admin.setPassword(name: name, password: try await passwordChecks.make(password, rounds: passwordRounds), signOut: signOut) else { throw Self.noUser(name) }
    }

    public func setQuota(user name: String, quota: Int64) async throws {
        guard quota > 0 else { throw APIFailure(.invalidValue, "quota must be positive") }
        guard try await admin.setQuota(name: name, quota: quota) else { throw Self.noUser(name) }
    }

    public func deleteUser(_ name: String) async throws {
        guard let account = try await metadata.account(named: name) else { throw Self.noUser(name) }
        for d in try await admin.devices(accountID: account.id) { await push.disconnect(account: account.id, device: d.id) }
        guard try await admin.deleteAccount(name: name) else { throw Self.noUser(name) }
    }

    /// The devices of `user`.
    public func devices(user name: String) async throws -> [DeviceRecord] {
        guard let account = try await metadata.account(named: name) else { throw Self.noUser(name) }
        return try await admin.devices(accountID: account.id)
    }

    /// Signs a device of `user` out for good (named by its name or ID); returns it.
    @discardableResult
    public func revokeDevice(user name: String, device: String) async throws -> DeviceRecord {
        guard let account = try await metadata.account(named: name) else { throw Self.noUser(name) }
        let all = try await admin.devices(accountID: account.id)
        let matches = all.filter { $0.id.description == device.lowercased() || $0.name == device }
        guard let d = matches.first else { throw APIFailure(.notFound, "\(name) has no device '\(device)' (see 'ubiq server device list \(name)')") }
        guard matches.count == 1 else { throw APIFailure(.invalidValue, "\(matches.count) devices of \(name) are named '\(device)'; give the device's ID") }
        _ = try await metadata.revokeDevice(accountID: account.id, deviceID: d.id)
        await push.disconnect(account: account.id, device: d.id)
        return d
    }

    static func noUser(_ name: String) -> APIFailure { APIFailure(.notFound, "no user '\(name.prefix(64))'") }

    static func validatePassword(_ password: String) throws {
        guard !password.isEmpty, password.utf8.count <= 1024 else { throw APIFailure(.invalidValue, "password must be 1-1024 bytes") }
    }
}
