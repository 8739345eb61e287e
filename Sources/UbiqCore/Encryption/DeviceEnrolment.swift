import Crypto
import Foundation

/// Bringing a new device into an end-to-end encrypted account from one that holds its key,
/// without the server being able to slip a device of its own in.
///
/// The new device makes an X25519 key pair and leaves its public key with the server as a
/// request (`enrol.<device>`); it shows a code derived from that public key (10 symbols, 50
/// bits). On a trusted device the user types the code (`ubiq devices approve CODE`): that device
/// takes the request whose public key gives the code — a key the server put in its place gives
/// another code — and leaves the account key sealed to it (`grant.<device>`: an ephemeral X25519
/// key, ECDH, HKDF-SHA256, AES-256-GCM bound to the account and the device). The new device
/// opens it with its private key, which never leaves it.
public enum DeviceEnrolment {
    static let version = "ubiq-enrol-v1"

    /// The sealed-key name of `device`'s request, and of its grant.
    public static func requestName(_ device: DeviceID) -> String { "enrol.\(device.description.lowercased())" }
    public static func grantName(_ device: DeviceID) -> String { "grant.\(device.description.lowercased())" }

    /// A new device's side: its private key, the request to leave with the server, and the
    /// code to show.
    public struct Request: Sendable {
        public let privateKey: Curve25519.KeyAgreement.PrivateKey
        public let text: String
        public var code: String { DeviceEnrolment.code(of: privateKey.publicKey.rawRepresentation) }

        /// A request of the device named `name`.
        public init(deviceName name: String) {
            privateKey = Curve25519.KeyAgreement.PrivateKey()
            text = "\(DeviceEnrolment.version) \(privateKey.publicKey.rawRepresentation.base64EncodedString()) \(Data(name.utf8).base64EncodedString())"
        }
    }

    /// What a request left with the server says: the public key and the device's name.
    public static func read(request text: String) throws -> (publicKey: Curve25519.KeyAgreement.PublicKey, deviceName: String) {
        let parts = text.split(separator: " ")
        guard parts.count == 3, parts[0] == version, let raw = Data(base64Encoded: String(parts[1])), let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: raw),
              let name = Data(base64Encoded: String(parts[2])).flatMap({ String(data: $0, encoding: .utf8) }), name.utf8.count <= 256 else {
            throw CoreError(.invalidValue, "a device's request to join is damaged")
        }
        return (key, name)
    }

    /// The code of a public key: 10 Crockford base32 symbols of its SHA-256, `XXXXX-XXXXX`.
    public static func code(of publicKey: Data) -> String {
        let symbols = Crockford.symbols(Array(SHA256.hash(data: Array(version.utf8) + Array(publicKey))), count: 10)
        return String(symbols.prefix(5)) + "-" + String(symbols.suffix(5))
    }

    /// A code as a person types it (case, dashes, spaces, O/I/L as 0/1/1), or nil.
    public static func normalized(code typed: String) -> String? {
        guard let out = Crockford.read(typed), out.count == 10 else { return nil }
        return String(out.prefix(5)) + "-" + String(out.suffix(5))
    }

    static func associated(user: String, device: DeviceID) -> [UInt8] { Array("\(version)\n\(user)\n\(device.description.lowercased())".utf8) }

    static func sealingKey(_ secret: SharedSecret, user: String, device: DeviceID) -> SymmetricKey {
        secret.hkdfDerivedSymmetricKey(using: SHA256.self, salt: Array(version.utf8), sharedInfo: associated(user: user, device: device), outputByteCount: 32)
    }

    /// A trusted device's side: `key` sealed to the device whose request is `request`.
    public static func grant(_ key: AccountKey, to request: String, user: String, device: DeviceID) throws -> String {
        let (publicKey, _) = try read(request: request)
        let ephemeral = Curve25519.KeyAgreement.PrivateKey()
        let secret = try ephemeral.sharedSecretFromKeyAgreement(with: publicKey)
        let box = try AES.GCM.seal(Array(key.text.utf8), using: sealingKey(secret, user: user, device: device), authenticating: associated(user: user, device: device))
        return "\(version) \(ephemeral.publicKey.rawRepresentation.base64EncodedString()) \(box.combined!.base64EncodedString())"
    }

    /// The new device's side: the account key in `grant`; `tampered` when it does not open.
    public static func open(grant: String, with privateKey: Curve25519.KeyAgreement.PrivateKey, user: String, device: DeviceID) throws -> AccountKey {
        let parts = grant.split(separator: " ")
        guard parts.count == 3, parts[0] == version, let raw = Data(base64Encoded: String(parts[1])),
              let ephemeral = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: raw), let sealed = Data(base64Encoded: String(parts[2])),
              let box = try? AES.GCM.SealedBox(combined: sealed), let secret = try? privateKey.sharedSecretFromKeyAgreement(with: ephemeral),
              let plain = try? AES.GCM.open(box, using: sealingKey(secret, user: user, device: device), authenticating: associated(user: user, device: device)) else {
            throw CoreError(.tampered, "the account key the server relayed for this device did not open")
        }
        return try AccountKey(text: String(decoding: plain, as: UTF8.self))
    }
}
