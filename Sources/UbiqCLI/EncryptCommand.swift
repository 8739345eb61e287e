import ArgumentParser
import Crypto
import Foundation
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
import UbiqProtocol

/// `ubiq encrypt`: converts an account that already holds documents to end-to-end encryption,
/// from a device that holds all of them.
///
/// The device's folder is the source of truth throughout and is never changed: first it is
/// brought fully in step (every document fetched); then the keys are made and the recovery key
/// shown, the other devices signed out, the settings kept aside in the state folder, the plain
/// items purged from the server (their version history and the trash with them), and the
/// engines started afresh on the encrypted account, which uploads everything sealed. A run cut
/// off anywhere is finished by running it again (`encrypting` in the config keeps the engines
/// from starting meanwhile).
struct EncryptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encrypt",
        abstract: "Encrypt an account that already holds documents end to end (from a device that holds them all).",
        discussion: """
            Everything goes up again sealed and the plain copies are purged from the server: version \
            history and the trash are not carried over, and every other device is signed out (sign \
            them in again; they are approved by the code they show). Prints the recovery key once.
            """)
    @Flag(name: .long, help: "Do not ask (needed without a terminal).") var yes = false
    @OptionGroup var home: HomeOption

    func run() async throws {
        let (h, loaded) = try home.config()
        guard let lock = try HomeLock.acquire(h) else {
            throw CLIError(.invalidRequest, "this device's daemon is running: stop it first (ubiq service stop, or end 'ubiq daemon'); encrypting needs the folder to itself")
        }
        defer { withExtendedLifetime(lock) {} }
        var config = loaded
        let client = config.apiClient
        let keys = try await mapClient { try await client.accountKeys() }
        let resuming = config.encrypting == true
        if !resuming {
            guard config.accountKey == nil, keys[AccountKeying.recoveryName] == nil else {
                throw CLIError(.pathExists, "\(config.user) is already encrypted end to end")
            }
            try await prepare(h, config)
        }
        let conversion = Conversion(home: h, client: client, user: config.user)

        // The keys, kept before the server learns of them (a run cut off after this finishes
        // with them), and the recovery key shown before anything is purged.
        if !resuming {
            let ring = AccountKeyring(AccountKey.generate())
            config.accountKey = ring.text
            config.deviceKey = Curve25519.KeyAgreement.PrivateKey().rawRepresentation.base64EncodedString()
            config.encrypting = true
            try config.save(h)
            try Self.cutHere("keys")
        }
        guard let ring = try config.keyring(), let deviceKey = config.deviceAgreementKey() else {
            throw CLIError(.invalidValue, "this device's config lost its keys while encrypting; sign in again")
        }
        if keys[AccountKeying.recoveryName] == nil {
            let recovery = RecoveryKey.generate()
            print(AccountKeying.recoveryNotice(recovery, server: config.server, user: config.user))
            if resuming { print("(a recovery key shown by an earlier, unfinished run is not valid: use this one)") }
            fflush(nil)
            try await conversion.publish(ring: ring, recovery: recovery, device: config, key: deviceKey)
            try Self.cutHere("publish")
        }
        var running = config
        running.encrypting = nil
        var uploaded = 0
        for id in config.containers {
            // One container at a time, each to its end (a run cut off redoes only the unfinished).
            if let n = conversion.finished(id) { uploaded += n; continue }
            try await conversion.setSettingsAside(id, device: config.deviceID)
            try await conversion.purge(id, ring: ring)
            try Self.cutHere("purge")
            try conversion.resetState(id)
            let n = try await conversion.upload(id, config: running.acting(on: id))
            try conversion.markFinished(id, files: n)
            uploaded += n
        }
        config.encrypting = nil
        try config.save(h)
        for id in config.containers { conversion.forget(id) }
        print("encrypted \(config.user) end to end: \(Counted.of(uploaded, "document")) sealed and up again in \(Counted.of(config.containers.count, "container")); the plain copies are gone from the server's index (its next garbage collection gives back their bytes)")
    }

    /// Before anything changes: every container of the account is synced here, this device is
    /// fully in step and holds every document, and the person agrees to sign the others out.
    func prepare(_ h: DeviceHome, _ config: DeviceConfig) async throws {
        let client = config.apiClient
        let onServer = try await mapClient { try await client.accountContainers() }
        let elsewhere = onServer.filter { name in !config.containers.contains { $0.string == name } }
        guard elsewhere.isEmpty else {
            throw CLIError(.invalidRequest, "the account also holds \(elsewhere.joined(separator: ", ")), which this device does not sync: sync it here first (ubiq ls --container ID adds it), so nothing stays plain")
        }
        for id in config.containers {
            let runtime = try DeviceRuntime(home: h, config: config.acting(on: id), settleTime: .milliseconds(200))
            await runtime.refresh()
            let missing = await Self.notHere(runtime)
            if !missing.isEmpty { _ = await runtime.engine.download(missing) }
            await runtime.engine.syncNow()
            _ = await runtime.kv.synchronize()
            let status = await runtime.engine.status()
            let still = await Self.notHere(runtime)
            await runtime.stop()
            guard status.idle, status.errors.isEmpty, still.isEmpty else {
                let why = still.isEmpty ? (status.errors.first.map { "\($0.path): \($0.message)" } ?? status.lastError ?? "changes still wait") : "\(Counted.of(still.count, "document")) could not be fetched (\(still.prefix(3).map(\.string).joined(separator: ", ")))"
                throw CLIError(.invalidRequest, "\(id) is not fully in step on this device, so it cannot be the source: \(why); run 'ubiq sync' and try again")
            }
        }
        let others = try await mapClient { try await client.devices() }.filter { $0.signedIn && !$0.current }
        print("""
            encrypting \(config.user) end to end from this device (\(TerminalText.safe(config.deviceName))):
              - every document goes up again, sealed; the server's plain copies, their version history and the trash are purged
              - \(others.isEmpty ? "no other device is signed in" : "signed out: " + others.map { TerminalText.safe($0.name) }.joined(separator: ", ") + " (sign them in again; they show a code to approve here)")
            """)
        guard !yes else { return }
        guard isatty(0) != 0 else { throw CLIError(.invalidRequest, "encrypting purges the plain copies on the server: confirm with --yes") }
        print("type encrypt to go on: ", terminator: "")
        fflush(nil)
        guard readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces) == "encrypt" else { throw CLIError(.invalidRequest, "not encrypted") }
    }

    /// Tests cut a run off after a step (`UBIQ_TEST_ENCRYPT_CUT=STEP`), as a crash or a kill
    /// would, to prove that running it again finishes the conversion.
    static func cutHere(_ step: String) throws {
        guard ProcessInfo.processInfo.environment["UBIQ_TEST_ENCRYPT_CUT"] == step else { return }
        throw CLIError(.internalError, "cut off after \(step) (UBIQ_TEST_ENCRYPT_CUT)")
    }

    /// The files this device lists but does not hold.
    static func notHere(_ runtime: DeviceRuntime) async -> [RelativePath] {
        await runtime.engine.listing().filter { $0.kind == .file && !$0.excluded && $0.status == .notDownloaded }.map(\.path)
    }
}
