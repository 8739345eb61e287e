import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

/// The server's key-value store as a replica uses it: as it is for a plain account, sealed
/// (`SettingsCipher`) for an end-to-end encrypted one. Entries go out sealed and come back
/// opened; a delete's token is matched to the key it stands for among `known` keys (a delete
/// of a key this device never held stays a delete of its token, which nothing shows).
struct SettingsServer: Sendable {
    let client: UbiqAPIClient
    /// An encrypted account's keys (nil: a plain account); the newest seal what goes out.
    let keyring: SharedKeyring?
    var cipher: SettingsCipher? { keyring.map { SettingsCipher(ring: $0.keys) } }

    func opened(_ r: KVEntriesResponse, known: some Sequence<String>) throws -> KVEntriesResponse {
        guard let cipher else { return r }
        var byToken: [String: String] = [:]
        for k in known { byToken[cipher.token(k)] = k }
        var r = r
        r.entries = try r.entries.map { e in
            let o = try cipher.open(e)
            guard o.value == nil, let k = byToken[o.key] else { return o }
            return KVEntry(key: k, value: nil, stamp: o.stamp, device: o.device)
        }
        return r
    }

    func all(_ store: ContainerID, known: some Sequence<String>) async throws -> KVEntriesResponse {
        try opened(try await client.kvAll(store), known: known)
    }

    func changes(_ store: ContainerID, after cursor: Int64, known: some Sequence<String>) async throws -> KVEntriesResponse {
        try opened(try await client.kvChanges(store, after: cursor), known: known)
    }

    func history(_ store: ContainerID, key: String) async throws -> [KVEntry] {
        guard let cipher else { return try await client.kvHistory(store, key: key) }
        return try await client.kvHistory(store, key: cipher.token(key)).map { e in
            let o = try cipher.open(e)
            return o.value == nil ? KVEntry(key: key, value: nil, stamp: o.stamp, device: o.device) : o
        }
    }

    /// The keys (among `known`) whose value on the server was sealed with an older generation
    /// of the account's key than the newest this device holds (`ubiq rekey` seals them again).
    func sealedWithAnOlderKey(_ store: ContainerID, known: some Sequence<String>) async throws -> [String] {
        guard let keyring else { return [] }
        let ring = keyring.keys, cipher = SettingsCipher(ring: ring)
        let older = Set(try await client.kvAll(store).entries.compactMap { e in
            e.value.flatMap(SettingsCipher.epoch(of:)).map { $0 < ring.current.epoch ? e.key : nil } ?? nil
        })
        return known.filter { older.contains(cipher.token($0)) }
    }

    func set(_ store: ContainerID, _ entries: [KVEntry]) async throws {
        _ = try await client.kvSet(store, cipher.map { c in entries.map(c.seal) } ?? entries)
    }
}
