import Crypto
import Foundation
import UbiqCore

/// The keys a server seals chunks with at rest (see ``SealedChunkStore``): the current one,
/// which seals every chunk written, then older ones still needed to open what they sealed until
/// the background pass has sealed it again (`ubiq server key rotate`).
///
/// Kept in a file of its own — created on the server's first start in its data folder (mode
/// 0600), or given with `--key-file` / `UBIQ_SERVER_KEY_FILE` to keep it off the disk that holds
/// the chunks — one line per key, the current one first: `ubiq-server-key-v1 BASE64`.
public struct ServerKeyRing: Sendable {
    /// The keys, the current one first.
    public let keys: [SymmetricKey]
    /// Each key's ID (the first 8 bytes of an HMAC of a fixed label under it: names the key in
    /// every sealed record and in the metadata database without revealing it).
    public let ids: [UInt64]

    public init(keys: [SymmetricKey]) {
        precondition(!keys.isEmpty)
        self.keys = keys
        self.ids = keys.map(Self.id(of:))
    }

    /// The key that seals what is written now.
    public var current: SymmetricKey { keys[0] }
    public var currentID: UInt64 { ids[0] }

    /// The key with this ID, if the ring holds it.
    public func key(id: UInt64) -> SymmetricKey? { ids.firstIndex(of: id).map { keys[$0] } }

    /// A key's ID as its 16 hex digits (what messages and `ubiq server key` show).
    public static func text(_ id: UInt64) -> String { String(format: "%016llx", id) }

    static func id(of key: SymmetricKey) -> UInt64 {
        let mac = HMAC<SHA256>.authenticationCode(for: Array("ubiq-server-key-id".utf8), using: key)
        return mac.withUnsafeBytes { raw in raw.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
    }

    /// A ring with a new random key in front of these (a rotation).
    public func rotated() -> ServerKeyRing { ServerKeyRing(keys: [SymmetricKey(size: .bits256)] + keys) }

    /// The ring without its older keys (once nothing is sealed with them).
    public func currentOnly() -> ServerKeyRing { ServerKeyRing(keys: [current]) }

    // MARK: the file

    static let prefix = "ubiq-server-key-v1 "

    /// Reads the key file at `path`; `invalid_value` if it is not one, or lets others read it.
    public static func load(_ path: String) throws -> ServerKeyRing {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw StorageError(.invalidValue, "cannot read the server key file \(path): \(String(cString: strerror(errno)))")
        }
        guard st.st_mode & 0o077 == 0 else {
            throw StorageError(.invalidValue, "the server key file \(path) may be read by others (mode \(String(st.st_mode & 0o777, radix: 8))): chmod 600 it")
        }
        guard st.st_size <= 64 << 10, let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw StorageError(.invalidValue, "the server key file \(path) is not a key file")
        }
        var keys: [SymmetricKey] = []
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") && !line.allSatisfy(\.isWhitespace) {
            guard line.hasPrefix(prefix), let raw = Data(base64Encoded: String(line.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces)),
                  raw.count == 32 else {
                throw StorageError(.invalidValue, "the server key file \(path) has a line that is not '\(prefix)BASE64' of 32 bytes")
            }
            keys.append(SymmetricKey(data: raw))
        }
        guard !keys.isEmpty else { throw StorageError(.invalidValue, "the server key file \(path) holds no key") }
        return ServerKeyRing(keys: keys)
    }

    /// The ring in the file at `path`, made (with one new key) if there is none.
    public static func loadOrCreate(_ path: String) throws -> (ring: ServerKeyRing, created: Bool) {
        if FileManager.default.fileExists(atPath: path) { return (try load(path), false) }
        let ring = ServerKeyRing(keys: [SymmetricKey(size: .bits256)])
        do { try ring.write(to: path, exclusive: true) } catch where FileManager.default.fileExists(atPath: path) {
            return (try load(path), false)  // another server of the fleet made it meanwhile
        }
        return (ring, true)
    }

    /// Writes the ring to `path` (mode 0600), durably: a new file renamed over the old one.
    public func write(to path: String, exclusive: Bool = false) throws {
        let text = "# Ubiquity's server keys: chunks at rest are sealed with the first; keep this file safe and apart from the chunks.\n"
            + keys.map { k in Self.prefix + k.withUnsafeBytes { Data($0).base64EncodedString() } }.joined(separator: "\n") + "\n"
        let tmp = path + ".tmp-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StorageError(.storageFailure, "cannot write the server key file \(path): \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        let ok = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == bytes.count && fsync(fd) == 0
        close(fd)
        guard ok else {
            unlink(tmp)
            throw StorageError(.storageFailure, "cannot write the server key file \(path)")
        }
        if exclusive {
            // First start: never over a key file another server made meanwhile.
            guard link(tmp, path) == 0 else {
                let e = errno
                unlink(tmp)
                throw StorageError(.storageFailure, "cannot create the server key file \(path): \(String(cString: strerror(e)))")
            }
            unlink(tmp)
        } else if rename(tmp, path) != 0 {
            unlink(tmp)
            throw StorageError(.storageFailure, "cannot replace the server key file \(path): \(String(cString: strerror(errno)))")
        }
        FileIO.syncDirectory((path as NSString).deletingLastPathComponent)
    }
}
