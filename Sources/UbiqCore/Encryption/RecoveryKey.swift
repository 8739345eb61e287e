import Crypto
import Foundation

/// The recovery key of an end-to-end encrypted account: 150 random bits written as 30
/// characters of Crockford's base32 in six groups of five (`7QK2M-…`), shown once when the
/// account is encrypted and never kept by the server or a device. It seals the account key
/// (AES-256-GCM under a key HKDF derives from it, bound to the account's name), so a device
/// that has it can sign in when no trusted device is at hand. It is random and long, so no
/// slow password hash is needed to stretch it.
public struct RecoveryKey: Sendable, Equatable {
    /// The 30 symbols, upper case, without dashes.
    public let symbols: String

    /// A new random recovery key (150 bits of swift-crypto's key generator: the system's CSPRNG).
    public static func generate() -> RecoveryKey {
        RecoveryKey(symbols: Crockford.symbols(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }, count: 30))
    }

    private init(symbols: String) { self.symbols = symbols }

    /// Reads a recovery key as a person types it: case, dashes and spaces do not matter, and
    /// `O`, `I`, `L` read as `0`, `1`, `1`. `invalid_value` unless 30 symbols remain.
    public init(typed: String) throws {
        guard let out = Crockford.read(typed) else {
            throw CoreError(.invalidValue, "a recovery key has only letters and digits (30 of them, in groups of five)")
        }
        guard out.count == 30 else { throw CoreError(.invalidValue, "a recovery key is 30 letters and digits; this has \(out.count)") }
        symbols = out
    }

    /// Six groups of five, as shown to the user.
    public var grouped: String { stride(from: 0, to: 30, by: 5).map { String(Array(symbols)[$0..<$0 + 5]) }.joined(separator: "-") }

    func key(user: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: Array(symbols.utf8)), salt: Array("ubiq-recovery-v1".utf8),
                               info: Array(user.utf8), outputByteCount: 32)
    }

    /// The X25519 key this recovery key stands for (HKDF of it and the account's name): its
    /// public half is on the account's device list, so a device that rolls the account's key
    /// seals the new ring to it as it does to every device (`keyring.recovery`) — the recovery
    /// key opens every generation without any device keeping it.
    public func agreementKey(user: String) -> Curve25519.KeyAgreement.PrivateKey {
        let raw = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: Array(symbols.utf8)), salt: Array("ubiq-recovery-agreement-v1".utf8),
                                         info: Array(user.utf8), outputByteCount: 32)
        return try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw.withUnsafeBytes { Data($0) })
    }

    /// The account key sealed under this recovery key, as text the server relays.
    public func seal(_ account: AccountKey, user: String) -> String {
        let box = try! AES.GCM.seal(Array(account.text.utf8), using: key(user: user), authenticating: Array("ubiq-recovery-v1\n\(user)".utf8))
        return box.combined!.base64EncodedString()
    }

    /// The account key `sealed` holds; `bad_credentials` when this is not its recovery key.
    public func open(_ sealed: String, user: String) throws -> AccountKey {
        guard let data = Data(base64Encoded: sealed), data.count < 4096, let box = try? AES.GCM.SealedBox(combined: data) else {
            throw CoreError(.tampered, "the server's sealed account key is damaged")
        }
        guard let plain = try? AES.GCM.open(box, using: key(user: user), authenticating: Array("ubiq-recovery-v1\n\(user)".utf8)) else {
            throw CoreError(.badCredentials, "that is not this account's recovery key")
        }
        return try AccountKey(text: String(decoding: plain, as: UTF8.self))
    }
}
