import Crypto
import Foundation

/// An end-to-end encrypted account's root key: 256 random bits that exist only on the
/// account's devices (and, sealed, under its recovery key). Every key a device uses is derived
/// from it per container with HKDF-SHA256, so nothing is shared between containers or accounts.
///
/// `epoch` counts key generations: revoking a device rolls a new root key (a new epoch) that
/// the remaining devices hold.
public struct AccountKey: Sendable, Equatable {
    /// The key generation (1 for an account's first key).
    public let epoch: Int
    let bytes: [UInt8]

    /// A key of `bytes` (exactly 32) at `epoch`.
    public init(bytes: [UInt8], epoch: Int) throws {
        guard bytes.count == 32 else { throw CoreError(.invalidValue, "an account key is 32 bytes, not \(bytes.count)") }
        guard epoch >= 1, epoch <= 1_000_000 else { throw CoreError(.invalidValue, "an account key's epoch is 1 to 1000000, not \(epoch)") }
        self.bytes = bytes
        self.epoch = epoch
    }

    /// A new random key at `epoch` (from swift-crypto's key generator: the system's CSPRNG).
    public static func generate(epoch: Int = 1) -> AccountKey {
        try! AccountKey(bytes: SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }, epoch: epoch)
    }

    static let textPrefix = "ubiq-account-key-v1"

    /// The key as one line (`ubiq-account-key-v1 EPOCH BASE64`), as a device keeps it in its
    /// config (readable by its owner only).
    public var text: String { "\(Self.textPrefix) \(epoch) \(Data(bytes).base64EncodedString())" }

    /// Reads `text`'s form back; throws `invalid_value` for anything else.
    public init(text: String) throws {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, parts[0] == Self.textPrefix, let epoch = Int(parts[1]), let data = Data(base64Encoded: String(parts[2])) else {
            throw CoreError(.invalidValue, "not an account key (expected '\(Self.textPrefix) EPOCH BASE64')")
        }
        try self.init(bytes: Array(data), epoch: epoch)
    }

    /// The keys of one container, derived from this root key.
    public func keys(for container: ContainerID) -> ContainerKeys {
        ContainerKeys(chunks: ChunkCipher(key: derive("chunks", container)), names: NameCipher(key: derive("names", container)),
                      records: derive("records", container), settings: derive("settings", container), epoch: epoch)
    }

    /// HKDF-SHA256 of the root key; `purpose`, the container and the epoch are its info, so
    /// each key serves one purpose in one container of one generation.
    func derive(_ purpose: String, _ container: ContainerID) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes), salt: Array("ubiq-e2e-v1".utf8),
                               info: Array("\(purpose)\n\(container.string)\n\(epoch)".utf8), outputByteCount: 32)
    }

    /// HKDF-SHA256 of the root key for something of the whole account (no container): `purpose`
    /// and the epoch are its info.
    func deriveAccount(_ purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes), salt: Array("ubiq-e2e-v1".utf8),
                               info: Array("\(purpose)\n*\n\(epoch)".utf8), outputByteCount: 32)
    }

    public static func == (a: AccountKey, b: AccountKey) -> Bool { a.epoch == b.epoch && a.bytes == b.bytes }
}

/// The keys a device uses for one container of an encrypted account.
public struct ContainerKeys: Sendable {
    /// Seals chunks and names them (the name is SHA-256 of the sealed bytes).
    public let chunks: ChunkCipher
    /// Seals each name of a path.
    public let names: NameCipher
    /// Seals version records (`RecordCipher`).
    public let records: SymmetricKey
    /// Seals settings (`SettingsCipher`).
    public let settings: SymmetricKey
    /// The root key's generation.
    public let epoch: Int
}
