import ArgumentParser
import Crypto
import Foundation
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
import UbiqProtocol

/// `ubiq devices [--json]`, `ubiq devices revoke NAME`: the account's devices, seen from one of them.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "List the account's devices, or revoke one (a lost laptop).",
                                                    subcommands: [DevicesList.self, DevicesRevoke.self, DevicesApprove.self], defaultSubcommand: DevicesList.self)
}

struct DevicesList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the account's devices.")
    @Flag(name: .long, help: "Print JSON.") var json = false
    @OptionGroup var home: HomeOption

    func run() async throws {
        let (_, config) = try home.config()
        let devices = try await mapClient { try await config.apiClient.devices() }
        if json { return try printJSON(devices) }
        printDevices(devices)
    }
}

struct DevicesRevoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Sign another device of the account out for good.")
    @Argument(help: "The device's name or ID (see 'ubiq devices').") var device: String
    @OptionGroup var home: HomeOption

    func run() async throws {
        let (h, config) = try home.config()
        let client = config.apiClient
        let all = try await mapClient { try await client.devices() }
        let matches = all.filter { $0.id.description == device.lowercased() || $0.name == device }
        guard let d = matches.first else { throw CLIError(.notFound, "no device '\(device)' on this account (see 'ubiq devices')") }
        guard matches.count == 1 else { throw CLIError(.invalidValue, "\(matches.count) devices are named '\(device)'; give the device's ID") }
        guard !d.current else { throw CLIError(.invalidRequest, "that is this device; use 'ubiq logout' to sign it out") }
        try await mapClient { try await client.revoke(device: d.id) }
        print("revoked \(d.name) (\(d.id))")
        if config.accountKey != nil { try await Self.roll(home: h, config: config, revoking: d, devices: all) }
    }

    /// On an encrypted account: a new generation of the account key, sealed to every device on
    /// the account's list but the revoked one (and to the recovery key), so nothing written from
    /// now on opens on the revoked device.
    /// Without `d` (`ubiq rekey --roll`), every device on the list gets the new generation.
    @discardableResult
    static func roll(home: DeviceHome, config: DeviceConfig, revoking d: DeviceInfo?, devices: [DeviceInfo]) async throws -> AccountKeyring? {
        guard let ring = try await freshRing(home: home, config: config) else { return nil }
        var config = try DeviceConfig.load(home) ?? config
        let key = config.deviceAgreementKey() ?? Curve25519.KeyAgreement.PrivateKey()
        let me = DeviceKeyList.Entry(holder: DeviceEnrolment.holder(config.deviceID), publicKey: key.publicKey.rawRepresentation, name: config.deviceName)
        let rolled = try await core {
            try await AccountKeyService(client: config.apiClient, user: config.user).roll(ring, revoking: d.map { DeviceEnrolment.holder($0.id) }, me: me)
        }
        config.accountKey = rolled.ring.text
        config.deviceKey = key.rawRepresentation.base64EncodedString()
        try config.save(home)
        let devicesSealed = rolled.sealedTo.filter { $0 != DeviceKeyList.recovery }.count
        print("rolled the account's key to epoch \(rolled.ring.current.epoch): sealed to \(devicesSealed) device\(devicesSealed == 1 ? "" : "s")\(rolled.sealedTo.contains(DeviceKeyList.recovery) ? " and the recovery key" : "")\(d.map { "; nothing written from now on opens on \(TerminalText.safe($0.name))" } ?? "")")
        if !rolled.sealedTo.contains(DeviceKeyList.recovery) {
            print("warning: the recovery key is not on this account's device list (it was encrypted before lists existed): it opens only what was written before epoch \(rolled.ring.current.epoch)")
        }
        for other in devices where other.signedIn && other.id != d?.id && !other.current && !rolled.sealedTo.contains(DeviceEnrolment.holder(other.id)) {
            print("warning: \(TerminalText.safe(other.name)) is not on the account's device list; sign it in again there (ubiq login shows a code to approve)")
        }
        return rolled.ring
    }
}

/// `ubiq devices approve CODE`: on a device of an end-to-end encrypted account, lets in the new
/// device that shows CODE (`DeviceEnrolment`).
struct DevicesApprove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "approve",
                                                    abstract: "Let a new device into an end-to-end encrypted account: the code it shows while it signs in.")
    @Argument(help: "The code the new device shows (XXXXX-XXXXX).") var code: String
    @OptionGroup var home: HomeOption

    func run() async throws {
        let (h, config) = try home.config()
        guard let ring = try await freshRing(home: h, config: config) else {
            throw CLIError(.keyMissing, "this device holds no key of an encrypted account; approve from one that does")
        }
        let (name, device) = try await core { try await AccountKeyService(client: config.apiClient, user: config.user).approve(code: code, ring: ring) }
        print("approved \(TerminalText.safe(name)) (\(device)): it now holds the account's key")
    }
}

/// The device's ring, with a generation another device rolled since it last looked taken first
/// (sealed to this device's key; kept in the config): a list written under a newer key than the
/// device holds cannot be read, let alone changed.
func freshRing(home: DeviceHome, config: DeviceConfig) async throws -> AccountKeyring? {
    guard let ring = try config.keyring() else { return nil }
    guard let key = config.deviceAgreementKey() else { return ring }
    let service = AccountKeyService(client: config.apiClient, user: config.user)
    guard let newer = try await core({ try await service.newerRing(than: ring, holder: DeviceEnrolment.holder(config.deviceID), key: key) }) else { return ring }
    if var c = try DeviceConfig.load(home) {
        c.accountKey = newer.text
        try c.save(home)
    }
    return newer
}
