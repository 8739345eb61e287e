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
/// A sealed name is at most 235 bytes, which leaves room for the server's own suffix on a
/// restore (`TOKEN (restored 2)`); so names of an encrypted account are at most
/// `maxNameBytes` bytes.
public struct NameCipher: Sendable {
    let key: SymmetricKey
    /// The longest name (UTF-8 bytes) an encrypted account keeps.
    public static let maxNameBytes = 160
    static let nonce = try! AES.GCM._SIV.Nonce(data: [UInt8](repeating: 0, count: 12))
    static let associated = Array("ubiq-name-e2e-v1".utf8)

    init(key: SymmetricKey) { self.key = key }

    /// `name` sealed; `invalid_path` when it is longer than `maxNameBytes`.
    public func seal(name: String) throws -> String {
        var bytes = Array(name.utf8)
        guard bytes.count <= Self.maxNameBytes else {
            throw CoreError(.invalidPath, "a name of an encrypted account is at most \(Self.maxNameBytes) bytes: \(name.prefix(40))…")
        }
        bytes.append(contentsOf: [UInt8](repeating: 0, count: (16 - bytes.count % 16) % 16))  // names never end in NUL
        let box = try! AES.GCM._SIV.seal(bytes, using: key, nonce: Self.nonce, authenticating: Self.associated)
        return Base64URL.encode(Array(box.combined.dropFirst(12)))
    }

    /// The name `token` seals; a server's restore suffix (`TOKEN (restored 2)`) is carried over
    /// to the name (`notes (restored 2).txt`). `tampered` when it does not open.
    public func open(name token: String) throws -> String {
        var sealed = Substring(token)
        var attempt: Int?
        if let r = token.range(of: " (restored") {
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
        guard let s = String(validating: name, as: UTF8.self), !s.isEmpty, !s.contains("/"), (try? RelativePath(validating: s)) != nil else {
            throw CoreError(.tampered, "a sealed name from the server is not a name")
        }
        guard let attempt else { return s }
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
        let suffix = attempt == 1 ? " (restored)" : " (restored \(attempt))"
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { return String(name[..<dot]) + suffix + String(name[dot...]) }
        return name + suffix
    }
}

/// Unpadded base64url (RFC 4648 §5): names on the server.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode<S: StringProtocol>(_ s: S) -> [UInt8]? {
        guard s.utf8.count <= 1024, s.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F }) else {
            return nil
        }
        var t = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while t.utf8.count % 4 != 0 { t += "=" }
        return Data(base64Encoded: t).map(Array.init)
    }
}
