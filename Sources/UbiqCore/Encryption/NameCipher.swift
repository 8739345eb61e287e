import Crypto
import CryptoExtras
import Foundation

/// Seals the names in the paths of an end-to-end encrypted container, one name at a time:
/// AES-256-GCM-SIV with a fixed nonce over the name padded with NUL bytes to a multiple of 16,
/// written as unpadded base64url. Deterministic, so the server keeps doing what it does with
/// paths — two devices creating the same name in one folder still collide, a folder's move
/// carries its contents, the trash and versions work — without reading a name. It learns the
/// tree's shape, that two names are equal, and names' lengths to 16 bytes (`ThreatModel.md`).
///
/// A name of 255 bytes seals to 363 characters: the server keeps names of up to
/// `RelativePath.maxStoredNameBytes` (400) in its paths, which leaves room for its own suffix on
/// a restore (`TOKEN (restored 2)`). So an encrypted account keeps every name a folder holds.
public struct NameCipher: Sendable {
    let key: SymmetricKey
    /// Names sealed and opened lately, both ways: most names of most paths are their folders'
    /// (every file of `Documents/Reports/` says `Documents` and `Reports` again).
    let cache = NameCache()
    /// The longest name (UTF-8 bytes) an encrypted account keeps: any a folder holds.
    public static let maxNameBytes = RelativePath.maxNameBytes
    static let nonce = try! AES.GCM._SIV.Nonce(data: [UInt8](repeating: 0, count: 12))
    static let associated = Array("ubiq-name-e2e-v1".utf8)

    init(key: SymmetricKey) { self.key = key }

    /// `name` sealed; `invalid_path` when it is longer than `maxNameBytes`.
    public func seal(name: String) throws -> String {
        if let hit = cache.sealed(name) { return hit }
        var bytes = Array(name.utf8)
        guard bytes.count <= Self.maxNameBytes else {
            throw CoreError(.invalidPath, "a name of an encrypted account is at most \(Self.maxNameBytes) bytes: \(name.prefix(40))…")
        }
        bytes.append(contentsOf: [UInt8](repeating: 0, count: (16 - bytes.count % 16) % 16))  // names never end in NUL
        let box = try! AES.GCM._SIV.seal(bytes, using: key, nonce: Self.nonce, authenticating: Self.associated)
        let token = Base64URL.encode(Array(box.combined.dropFirst(12)))
        cache.note(name: name, token: token)
        return token
    }

    /// The name `token` seals; a server's restore suffix (`TOKEN (restored 2)`) is carried over
    /// to the name (`notes (restored 2).txt`). `tampered` when it does not open.
    public func open(name token: String) throws -> String {
        if let hit = cache.opened(token) { return hit }
        var sealed = Substring(token)
        var attempt: Int?
        // A sealed name has no space; only the server's restore suffix brings one.
        if token.utf8.contains(0x20), let r = token.range(of: " (restored") {
            sealed = token[..<r.lowerBound]
            let rest = token[r.upperBound...]
            if rest == ")" { attempt = 1 } else if rest.hasPrefix(" "), rest.hasSuffix(")"), let n = Int(rest.dropFirst().dropLast()), n >= 2 {
                attempt = n
            } else {
                throw CoreError(.tampered, "a name from the server is not a sealed name")
            }
        }
        guard let bytes = Base64URL.decode(sealed), bytes.count >= 32, bytes.count % 16 == 0 else {
            throw CoreError(.tampered, "a name from the server is not a sealed name")
        }
        let plain: Data
        do {
            let box = try AES.GCM._SIV.SealedBox(nonce: Self.nonce, ciphertext: bytes[..<(bytes.count - 16)], tag: bytes[(bytes.count - 16)...])
            plain = try AES.GCM._SIV.open(box, using: key, authenticating: Self.associated)
        } catch {
            throw CoreError(.tampered, "a name from the server did not open with this account's key")
        }
        var name = Array(plain)
        while name.last == 0 { name.removeLast() }
        guard let s = String(validating: name, as: UTF8.self), !s.isEmpty, !s.contains("/"), s.utf8.count <= Self.maxNameBytes,
              (try? RelativePath(validating: s)) != nil else {
            throw CoreError(.tampered, "a sealed name from the server is not a name")
        }
        guard let attempt else {
            cache.note(name: s, token: token)
            return s
        }
        return Self.restored(s, attempt: attempt)
    }

    /// `path` with each name sealed.
    public func seal(path: RelativePath) throws -> RelativePath {
        try RelativePath(validating: try path.components.map { try seal(name: $0) }.joined(separator: "/"))
    }

    /// The path `sealed` stands for.
    public func open(path sealed: RelativePath) throws -> RelativePath {
        do { return try RelativePath(validating: try sealed.components.map { try open(name: $0) }.joined(separator: "/")) } catch let e as CoreError where e.code == .invalidPath {
            throw CoreError(.tampered, "a path from the server does not open to a path: \(e.message)")
        }
    }

    /// The server's restore rename (`SQLMetadataStore.restoredName`) done on the real name.
    static func restored(_ name: String, attempt: Int) -> String {
        RelativePath.suffixed(name, attempt == 1 ? " (restored)" : " (restored \(attempt))")
    }
}

/// A bounded memory of names and their tokens, both ways (emptied when full).
final class NameCache: @unchecked Sendable {
    private let lock = NSLock()
    private var tokens: [String: String] = [:]
    private var names: [String: String] = [:]
    static let limit = 16_384

    func sealed(_ name: String) -> String? { lock.withLock { tokens[name] } }
    func opened(_ token: String) -> String? { lock.withLock { names[token] } }

    func note(name: String, token: String) {
        lock.withLock {
            if tokens.count >= Self.limit { tokens.removeAll(keepingCapacity: true); names.removeAll(keepingCapacity: true) }
            tokens[name] = token
            names[token] = name
        }
    }
}

/// Unpadded base64url (RFC 4648 §5): names on the server. By hand over bytes: every name of
/// every path in and out goes through it (Foundation's string replacing cost a fifth of the
/// CPU of syncing 10,000 small files).
enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    static let values: [UInt8] = {
        var v = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { v[Int(c)] = UInt8(i) }
        return v
    }()

    static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        if bytes.count - i == 1 {
            let n = UInt32(bytes[i]) << 16
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)]]
        } else if bytes.count - i == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of `s`, or nil for anything but unpadded base64url (at most `limit` characters).
    static func decode<S: StringProtocol>(_ s: S, limit: Int = 1024) -> [UInt8]? {
        let u = Array(s.utf8)
        guard u.count <= limit, u.count % 4 != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(u.count * 3 / 4)
        var acc: UInt32 = 0, bits = 0
        for c in u {
            let v = values[Int(c)]
            guard v != 0xFF else { return nil }
            acc = acc << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        guard acc & ((1 << UInt32(bits)) - 1) == 0 else { return nil }  // no stray bits: one spelling per name
        return out
    }
}
