import Foundation
import UbiqCore

/// Binds a metadata database to the server keys its chunks are sealed with (their IDs, in
/// `server_keys`): every server on one database must hold them all, so none writes chunks the
/// others cannot read, and a lost key file is never replaced by a new key in silence (the old
/// chunks would then open nowhere).
public enum ServerKeyCheck {
    /// The ring in `path` — made there if the file is missing and the database has never seen a
    /// key — bound to `database`. `invalid_value` with what to do when the file is missing but
    /// chunks were sealed, or lacks a key they were sealed with.
    public static func open(_ path: String, database: any SQLDatabase, now: Date = Date()) async throws -> (ring: ServerKeyRing, created: Bool) {
        let known = try await recorded(in: database)
        let ring: ServerKeyRing, created: Bool
        if FileManager.default.fileExists(atPath: path) || !known.isEmpty {
            guard FileManager.default.fileExists(atPath: path) else {
                throw StorageError(.invalidValue, "the server key file \(path) is missing, and chunks were sealed with key \(known.sorted().joined(separator: ", ")): "
                                   + "restore that file (or give the right one with --key-file / UBIQ_SERVER_KEY_FILE); without it those chunks cannot be read")
            }
            (ring, created) = (try ServerKeyRing.load(path), false)
        } else {
            (ring, created) = try ServerKeyRing.loadOrCreate(path)
        }
        try await bind(ring, to: database, known: known, path: path, now: now)
        return (ring, created)
    }

    /// The key IDs the database has recorded.
    public static func recorded(in database: any SQLDatabase) async throws -> Set<String> {
        try await database.read { c in Set(try c.rows("SELECT id FROM server_keys", []).map { try $0[0] as String }) }
    }

    /// Stands in the table for chunks stored before sealing (until a pass has sealed them all).
    public static let plaintext = "plaintext"

    static func bind(_ ring: ServerKeyRing, to database: any SQLDatabase, known: Set<String>, path: String, now: Date) async throws {
        let held = Set(ring.ids.map(ServerKeyRing.text))
        if let missing = known.subtracting(held).subtracting([plaintext]).sorted().first {
            throw StorageError(.invalidValue, "chunks were sealed with server key \(missing), which the key file \(path) does not hold: "
                               + "start this server with the key file the others use (--key-file / UBIQ_SERVER_KEY_FILE)")
        }
        let current = ServerKeyRing.text(ring.currentID)
        guard !known.contains(current) else { return }
        // The first key a store gets: chunks it holds from before sealing are sealed by the next pass.
        let ids = known.isEmpty ? [current, plaintext] : [current]
        try await database.write { c in
            for id in ids {
                _ = try c.execute(c.dialect == .postgres ? "INSERT INTO server_keys (id, added) VALUES (?, ?) ON CONFLICT (id) DO NOTHING"
                                                         : "INSERT OR IGNORE INTO server_keys (id, added) VALUES (?, ?)", [id, now.timeIntervalSince1970])
            }
        }
    }

    /// Whether chunks may be sealed with another key than the ring's current one, or stored
    /// before sealing: a pass (`SealedChunkStore.reseal`) is due.
    public static func resealDue(_ ring: ServerKeyRing, in database: any SQLDatabase) async throws -> Bool {
        try await recorded(in: database) != [ServerKeyRing.text(ring.currentID)]
    }

    /// Forgets `ids` (the `plaintext` row of a store found empty).
    public static func forget(_ ids: [String], in database: any SQLDatabase) async throws {
        try await database.write { c in for id in ids { _ = try c.execute("DELETE FROM server_keys WHERE id = ?", [id]) } }
    }

    /// Forgets every key but the ring's current one (after a pass sealed every chunk with it).
    public static func forgetOthers(than ring: ServerKeyRing, in database: any SQLDatabase) async throws {
        let held = [ServerKeyRing.text(ring.currentID)]
        try await database.write { c in
            for id in try c.rows("SELECT id FROM server_keys", []).map({ try $0[0] as String }) where !held.contains(id) {
                _ = try c.execute("DELETE FROM server_keys WHERE id = ?", [id])
            }
        }
    }
}
