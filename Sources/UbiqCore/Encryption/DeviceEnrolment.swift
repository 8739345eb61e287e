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

    static func associated(user: String, holder: String) -> [UInt8] { Array("\(version)\n\(user)\n\(holder)".utf8) }

    static func sealingKey(_ secret: SharedSecret, user: String, holder: String) -> SymmetricKey {
        secret.hkdfDerivedSymmetricKey(using: SHA256.self, salt: Array(version.utf8), sharedInfo: associated(user: user, holder: holder), outputByteCount: 32)
    }

    /// The name a device goes by where keys are sealed to it: its ID in lower case.
    public static func holder(_ device: DeviceID) -> String { device.description.lowercased() }

    /// `text` sealed to the X25519 key `publicKey` of `holder` (a device's ID, or `recovery`):
    /// an ephemeral key, ECDH, HKDF-SHA256, AES-256-GCM bound to the account and the holder.
    public static func seal(_ text: String, to publicKey: Curve25519.KeyAgreement.PublicKey, user: String, holder: String) throws -> String {
        let ephemeral = Curve25519.KeyAgreement.PrivateKey()
        let secret = try ephemeral.sharedSecretFromKeyAgreement(with: publicKey)
        let box = try AES.GCM.seal(Array(text.utf8), using: sealingKey(secret, user: user, holder: holder), authenticating: associated(user: user, holder: holder))
        return "\(version) \(ephemeral.publicKey.rawRepresentation.base64EncodedString()) \(box.combined!.base64EncodedString())"
    }

    /// What `seal` sealed to `privateKey`'s public half; `tampered` when it does not open.
    public static func open(_ sealed: String, with privateKey: Curve25519.KeyAgreement.PrivateKey, user: String, holder: String) throws -> String {
        let parts = sealed.split(separator: " ")
        guard sealed.utf8.count <= 64 << 10, parts.count == 3, parts[0] == version, let raw = Data(base64Encoded: String(parts[1])),
              let ephemeral = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: raw), let data = Data(base64Encoded: String(parts[2])),
              let box = try? AES.GCM.SealedBox(combined: data), let secret = try? privateKey.sharedSecretFromKeyAgreement(with: ephemeral),
              let plain = try? AES.GCM.open(box, using: sealingKey(secret, user: user, holder: holder), authenticating: associated(user: user, holder: holder)) else {
            throw CoreError(.tampered, "the account key the server relayed for this device did not open")
        }
        return String(decoding: plain, as: UTF8.self)
    }

    /// A trusted device's side: `ring` sealed to the device whose request is `request`.
    public static func grant(_ ring: AccountKeyring, to request: String, user: String, device: DeviceID) throws -> String {
        try seal(ring.text, to: try read(request: request).publicKey, user: user, holder: holder(device))
    }

    /// The new device's side: the account's keys in `grant`; `tampered` when it does not open.
    public static func open(grant: String, with privateKey: Curve25519.KeyAgreement.PrivateKey, user: String, device: DeviceID) throws -> AccountKeyring {
        let text = try open(grant, with: privateKey, user: user, holder: holder(device))
        do { return try AccountKeyring(text: text) } catch { throw CoreError(.tampered, "the account key the server relayed for this device is damaged") }
    }
}
