import Crypto
import Foundation
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
import UbiqProtocol

/// The steps of `ubiq encrypt` that change the server and the device's state (not its folder).
/// Each can run again after a run was cut off: it finishes what is left.
struct Conversion {
    let home: DeviceHome
    let client: UbiqAPIClient
    let user: String

    /// The server learns the account is encrypted: the other devices signed out, the first key
    /// under the recovery key, this device and the recovery key on the device list.
    func publish(ring: AccountKeyring, recovery: RecoveryKey, device config: DeviceConfig, key: Curve25519.KeyAgreement.PrivateKey) async throws {
        try await core {
            for d in try await client.devices() where d.signedIn && !d.current { try await client.revoke(device: d.id) }
            try await client.putAccountKey(name: AccountKeying.recoveryName, value: recovery.seal(ring.identity, user: user), replace: false)
            let service = AccountKeyService(client: client, user: user)
            try await service.register(service.recoveryEntry(recovery), ring: ring)
            try await service.register(DeviceKeyList.Entry(holder: DeviceEnrolment.holder(config.deviceID), publicKey: key.publicKey.rawRepresentation,
                                                            name: config.deviceName), ring: ring)
        }
    }

    func doneFile(_ id: ContainerID) -> URL { home.stateDirectory.appendingPathComponent("encrypt-done-\(id.string)") }

    /// How many files a container sent up sealed, when an earlier run of this conversion finished it.
    func finished(_ id: ContainerID) -> Int? {
        FileManager.default.contents(atPath: doneFile(id).path).flatMap { Int(String(decoding: $0, as: UTF8.self)) }
    }

    func markFinished(_ id: ContainerID, files: Int) throws {
        guard FileManager.default.createFile(atPath: doneFile(id).path, contents: Data("\(files)".utf8)) else {
            throw CLIError(.storageFailure, "cannot write \(doneFile(id).path)")
        }
    }

    /// Removes what the conversion kept of a container (once the whole account is done).
    func forget(_ id: ContainerID) {
        try? FileManager.default.removeItem(at: doneFile(id))
        try? FileManager.default.removeItem(at: settingsFile(id))
    }

    func settingsFile(_ id: ContainerID) -> URL { home.stateDirectory.appendingPathComponent("encrypt-settings-\(id.string).json") }

    /// The container's plain settings, written to the state folder (owner only) and then removed
    /// from the server (a delete of each key, stamped after its last write); they go up again
    /// sealed once the engines run on the encrypted account.
    func setSettingsAside(_ id: ContainerID, device: DeviceID) async throws {
        let file = settingsFile(id)
        var kept: [KVEntry]
        if let data = FileManager.default.contents(atPath: file.path) {
            kept = try JSONDecoder().decode([KVEntry].self, from: data)  // set aside by an earlier run
        } else {
            kept = try await mapClient { try await client.kvAll(id) }.entries.filter { $0.value != nil }
            let tmp = file.appendingPathExtension("tmp")
            guard FileManager.default.createFile(atPath: tmp.path, contents: try JSONEncoder().encode(kept), attributes: [.posixPermissions: 0o600]),
                  rename(tmp.path, file.path) == 0 else {
                throw CLIError(.storageFailure, "cannot keep the settings aside in \(file.path)")
            }
        }
        guard !kept.isEmpty else { return }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let wall = max(now, kept.map(\.stamp.wallMillis).max() ?? 0)
        let counter = (kept.filter { $0.stamp.wallMillis == wall }.map(\.stamp.counter).max() ?? 0) + 1
        let deletes = kept.map { KVEntry(key: $0.key, value: nil, stamp: HLCTimestamp(wallMillis: wall, counter: counter), device: device) }
        _ = try await mapClient { try await client.kvSet(id, deletes) }
    }

    /// Purges the container's plain items. Each live one is first renamed to a random name in
    /// its folder, deepest first — so the deletes the server keeps to tell devices (its feed's
    /// tombstones) hold no name the account had — then every top-level one is deleted (a folder
    /// takes what it holds) and the trash emptied: their versions and the trash's earlier items
    /// go with it.
    func purge(_ id: ContainerID, ring: AccountKeyring) async throws {
        let names = ring.keys(for: id).identity.names
        var cursor: Int64 = 0
        var live: [ItemID: ItemRecord] = [:]
        while true {
            let page = try await mapClient { try await client.changes(id, after: cursor, limit: 1000) }
            for i in page.items { live[i.id] = i.deletedAt == nil && (try? names.open(path: i.path)) == nil ? i : nil }
            cursor = page.cursor
            if !page.hasMore || page.items.isEmpty { break }
        }
        // Deepest first: a folder renamed after what it holds carries their random names along.
        var top: [ItemID] = []
        for item in live.values.sorted(by: { $0.path.components.count > $1.path.components.count }) {
            let parent = item.path.components.dropLast().joined(separator: "/")
            let random = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0 ... .max)) }.joined()
            let to = try RelativePath(validating: parent.isEmpty ? random : parent + "/" + random)
            do { _ = try await client.move(id, item: item.id, to: to) } catch let e as ClientError where e.code != .serverUnreachable {
                // Renaming only keeps the old name out of the tombstone; the delete still happens.
            }
            if item.path.components.count == 1 { top.append(item.id) }
        }
        for item in top {
            do { _ = try await client.delete(id, item: item) } catch let e as ClientError where e.code == .notFound { continue }
        }
        _ = try await mapClient { try await client.emptyTrash(id) }
    }

    /// Forgets what the device's engine and settings replica knew of the plain account (the
    /// folder stays as it is): the engine starts afresh and sends the folder up sealed.
    func resetState(_ id: ContainerID) throws { try Self.resetState(home, id) }

    /// The same for any home: also what a device signed out by a conversion does when it signs
    /// in again (what its engines knew is of the plain account).
    static func resetState(_ home: DeviceHome, _ id: ContainerID) throws {
        for db in [home.stateDatabase(id), home.keyValueDatabase(id)] {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let path = db.path + suffix
                guard FileManager.default.fileExists(atPath: path) else { continue }
                do { try FileManager.default.removeItem(atPath: path) } catch {
                    throw CLIError(.storageFailure, "cannot reset \(path): \(error.localizedDescription)")
                }
            }
        }
    }

    /// Runs the container's engine on the encrypted account until the folder is up again,
    /// sealed, and puts the settings set aside back (sealed). Returns how many files it holds.
    func upload(_ id: ContainerID, config: DeviceConfig) async throws -> Int {
        let runtime = try DeviceRuntime(home: home, config: config, settleTime: .milliseconds(200))
        await runtime.refresh()
        let file = settingsFile(id)
        if let data = FileManager.default.contents(atPath: file.path) {
            let kept = try JSONDecoder().decode([KVEntry].self, from: data)
            if !kept.isEmpty { try await runtime.kv.setValues(Dictionary(kept.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })) }
        }
        var status = await runtime.engine.status()
        for _ in 0..<5 {
            await runtime.engine.syncNow()
            status = await runtime.engine.status()
            if status.idle { break }
        }
        let settled = await runtime.kv.synchronize()
        let files = await runtime.engine.listing().filter { $0.kind == .file }.count
        await runtime.stop()
        guard status.idle, status.errors.isEmpty, settled else {
            let why = status.errors.first.map { "\($0.path): \($0.message)" } ?? status.lastError ?? (settled ? "changes still wait" : "the settings did not go up")
            throw CLIError(.invalidRequest, "\(id) did not finish going up sealed (\(why)); run 'ubiq encrypt' again to finish")
        }
        return files
    }
}
