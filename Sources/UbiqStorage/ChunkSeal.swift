import Crypto
import Foundation
import UbiqCore

/// A chunk as the server keeps it at rest: sealed with AES-256-GCM under the server's current
/// key, a random nonce for each record, the chunk's name (its hash) bound as associated data —
/// so a record moved under another name, cut short or changed does not open.
///
/// A record: `UBQS` · version 1 · the key's ID (8 bytes) · nonce (12) · ciphertext · tag (16).
/// A record without that beginning is a chunk stored before sealing (plaintext): it is read as
/// one only if it hashes to its name.
public enum ChunkSeal {
    static let magic: [UInt8] = Array("UBQS".utf8) + [1]
    /// The bytes a record adds to its chunk.
    public static let overhead = 5 + 8 + 12 + 16

    static func associatedData(_ hash: ContentHash) -> [UInt8] { Array("ubiq-chunk-v1 \(hash.hex)".utf8) }

    /// Appends `plain` sealed as `hash`'s record to `out`; false if it does not fit.
    public static func seal(_ plain: UnsafeRawBufferPointer, as hash: ContentHash, ring: ServerKeyRing, into out: PackBytes) throws -> Bool {
        let box = try AES.GCM.seal(plain, using: ring.current, nonce: AES.GCM.Nonce(), authenticating: associatedData(hash))
        var head = magic
        withUnsafeBytes(of: ring.currentID.bigEndian) { head += $0 }
        head += box.nonce.withUnsafeBytes { Array($0) }
        guard plain.count + overhead <= out.capacity - out.count else { return false }
        _ = head.withUnsafeBytes { out.append($0) }
        _ = box.ciphertext.withUnsafeBytes { out.append($0) }
        _ = box.tag.withUnsafeBytes { out.append($0) }
        return true
    }

    /// Whether a record was sealed (rather than stored before sealing), and with which key.
    public static func keyID(of record: UnsafeRawBufferPointer) -> UInt64? {
        guard record.count >= overhead, record.prefix(magic.count).elementsEqual(magic) else { return nil }
        return record[5..<13].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// Hands `record`'s chunk to `body`: opened when sealed (its tag checked: what opens is what
    /// was sealed under this name), else a chunk stored before sealing, which must hash to
    /// `hash`. `verify`: the opened bytes are hashed too. `storage_failure` for a record that is
    /// neither, or sealed with a key the ring does not hold.
    public static func open<T>(_ record: UnsafeRawBufferPointer, as hash: ContentHash, ring: ServerKeyRing, verify: Bool,
                               _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        guard let id = keyID(of: record) else {
            guard ContentHash.of(buffer: record) == hash else { throw StorageError(.chunkDamaged, "stored chunk \(hash) is damaged on the server") }
            return try body(record)
        }
        let opened: Data
        do {
            guard let key = ring.key(id: id) else {
                throw StorageError(.storageFailure, "stored chunk \(hash) is sealed with server key \(ServerKeyRing.text(id)), which this server's key file does not hold")
            }
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: record[13..<25]), ciphertext: record[25..<(record.count - 16)],
                                            tag: record[(record.count - 16)...])
            opened = try AES.GCM.open(box, using: key, authenticating: associatedData(hash))
        } catch {
            // A chunk stored before sealing that happens to begin like a record.
            if ContentHash.of(buffer: record) == hash { return try body(record) }
            if let e = error as? StorageError { throw e }
            throw StorageError(.chunkDamaged, "stored chunk \(hash) is damaged on the server (its seal does not open)")
        }
        return try opened.withUnsafeBytes { plain in
            if verify && ContentHash.of(buffer: plain) != hash { throw StorageError(.chunkDamaged, "stored chunk \(hash) is damaged on the server") }
            return try body(plain)
        }
    }
}
