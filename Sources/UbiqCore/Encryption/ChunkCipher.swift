import Crypto
import CryptoExtras
import Foundation

/// Seals the chunks of one container of an end-to-end encrypted account: AES-256-GCM-SIV with a
/// fixed nonce, so it is deterministic — the same chunk seals to the same bytes — and a
/// chunk's name on the server is SHA-256 of its sealed bytes. That keeps what makes sync fast:
/// equal chunks in the container are stored once, deltas and the reuse of local chunks work
/// unchanged, and the server still verifies every upload against its name (so no account can
/// plant bytes under a name another will use). Across containers and accounts the keys differ,
/// so nothing is shared. The server learns equality of chunks within a container and their
/// sizes (`ThreatModel.md`).
public struct ChunkCipher: Sendable {
    let key: SymmetricKey
    /// What sealing adds to a chunk (the tag).
    public static let overhead = 16
    static let nonce = try! AES.GCM._SIV.Nonce(data: [UInt8](repeating: 0, count: 12))
    static let associated = Array("ubiq-chunk-e2e-v1".utf8)

    init(key: SymmetricKey) { self.key = key }

    /// The chunk sealed: ciphertext then tag, `overhead` bytes longer.
    public func seal(_ plain: UnsafeRawBufferPointer) -> [UInt8] {
        let box = try! AES.GCM._SIV.seal(plain, using: key, nonce: Self.nonce, authenticating: Self.associated)
        return Array(box.combined.dropFirst(12))
    }

    /// The chunk sealed (see `seal(_:)`).
    public func seal(_ plain: [UInt8]) -> [UInt8] { plain.withUnsafeBytes { seal($0) } }

    /// The chunk in `sealed`, or `tampered` when it does not open with this container's key.
    public func open(_ sealed: UnsafeRawBufferPointer) throws -> [UInt8] {
        guard sealed.count > Self.overhead else { throw CoreError(.tampered, "a sealed chunk of \(sealed.count) bytes is too short") }
        do {
            let box = try AES.GCM._SIV.SealedBox(nonce: Self.nonce, ciphertext: sealed[..<(sealed.count - Self.overhead)],
                                                 tag: sealed[(sealed.count - Self.overhead)...])
            return Array(try AES.GCM._SIV.open(box, using: key, authenticating: Self.associated))
        } catch {
            throw CoreError(.tampered, "a chunk did not open with this account's key")
        }
    }

    /// The chunk's name: SHA-256 of its sealed bytes.
    public func name(of plain: UnsafeRawBufferPointer) -> ContentHash { seal(plain).withUnsafeBytes { ContentHash.of(buffer: $0) } }
}

/// How a device names chunks: SHA-256 of their bytes (a plain account), or of their sealed
/// bytes (an end-to-end encrypted one). Everything that names or checks a chunk on a device
/// goes through one of these, so the engine works the same on both kinds of account.
public struct ChunkNaming: Sendable {
    /// The container's chunk cipher; nil for a plain account.
    public let cipher: ChunkCipher?

    public init(cipher: ChunkCipher?) { self.cipher = cipher }

    /// SHA-256 of the bytes.
    public static let plain = ChunkNaming(cipher: nil)

    /// The name of the chunk `buffer` holds.
    public func name(_ buffer: UnsafeRawBufferPointer) -> ContentHash {
        guard let cipher else { return .of(buffer: buffer) }
        return cipher.name(of: buffer)
    }

    /// The name of the chunk `bytes`.
    public func name<C: ContiguousBytes>(_ bytes: C) -> ContentHash { bytes.withUnsafeBytes { name($0) } }

    /// The bytes the server stores for a chunk: the chunk itself, or sealed.
    public func stored(_ plain: UnsafeRawBufferPointer) -> [UInt8] { cipher?.seal(plain) ?? Array(plain) }

    /// How many bytes the server stores for a chunk of `size`.
    public func storedSize(_ size: Int) -> Int { cipher == nil ? size : size + ChunkCipher.overhead }
}
