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
    /// Chunks sealed to name them while a folder was hashed, kept for their upload (the one
    /// that follows need not seal them again); shared by every copy of this cipher.
    let kept = SealedChunks()
    /// What sealing adds to a chunk (the tag).
    public static let overhead = 16
    static let nonceBytes = [UInt8](repeating: 0, count: 12)
    static let nonce = try! AES.GCM._SIV.Nonce(data: nonceBytes)
    static let associated = Array("ubiq-chunk-e2e-v1".utf8)

    init(key: SymmetricKey) { self.key = key }

    /// The chunk sealed: ciphertext then tag, `overhead` bytes longer.
    public func seal(_ plain: UnsafeRawBufferPointer) -> [UInt8] { Array(sealedData(plain)) }

    /// The chunk sealed (see `seal(_:)`) where AES-GCM-SIV left it: no copy.
    public func sealedData(_ plain: UnsafeRawBufferPointer) -> Data {
        try! AES.GCM._SIV.seal(plain, using: key, nonce: Self.nonce, authenticating: Self.associated).combined.dropFirst(12)
    }

    /// The chunk sealed (see `seal(_:)`).
    public func seal(_ plain: [UInt8]) -> [UInt8] { plain.withUnsafeBytes { seal($0) } }

    /// The chunk in `sealed`, or `tampered` when it does not open with this container's key.
    public func open(_ sealed: UnsafeRawBufferPointer) throws -> [UInt8] { Array(try openData(sealed)) }

    /// The chunk in `sealed` (see `open(_:)`) as AES-GCM-SIV hands it out: no copy. The sealed
    /// bytes are copied once, whole, behind the fixed nonce (the box's own constructor from
    /// parts appends them byte by byte: a fifth of a device's copying of a big download).
    public func openData(_ sealed: UnsafeRawBufferPointer) throws -> Data {
        guard sealed.count > Self.overhead else { throw CoreError(.tampered, "a sealed chunk of \(sealed.count) bytes is too short") }
        do {
            var combined = Data(capacity: Self.nonceBytes.count + sealed.count)
            combined.append(contentsOf: Self.nonceBytes)
            combined.append(sealed.assumingMemoryBound(to: UInt8.self))
            return try AES.GCM._SIV.open(try AES.GCM._SIV.SealedBox(combined: combined), using: key, authenticating: Self.associated)
        } catch {
            throw CoreError(.tampered, "a chunk did not open with this account's key")
        }
    }

    /// The chunk's name: SHA-256 of its sealed bytes; with `keeping`, the sealed bytes are kept
    /// for the chunk's upload (`sealed(_:named:)`).
    public func name(of plain: UnsafeRawBufferPointer, keeping: Bool = false) -> ContentHash {
        // Hashed (and kept) where the box holds it: no copy of the sealed bytes — most of a big
        // file's chunks are named and never uploaded (an edit sends the changed ones).
        let box = try! AES.GCM._SIV.seal(plain, using: key, nonce: Self.nonce, authenticating: Self.associated)
        let sealed = box.combined.dropFirst(12)
        let name = sealed.withUnsafeBytes { ContentHash.of(buffer: $0) }
        if keeping { kept.put(name, sealed) }
        return name
    }

    /// The sealed bytes of the chunk `plain` named `name`: kept from its naming when they still
    /// are (sealing is deterministic: a chunk of that name is exactly those bytes), else sealed now.
    public func sealed(_ plain: UnsafeRawBufferPointer, named name: ContentHash) -> Data {
        kept.take(name) ?? sealedData(plain)
    }

    /// The sealed bytes of the chunk named `name` kept from its naming, if they still are (taken).
    public func takeKept(_ name: ContentHash) -> Data? { kept.take(name) }
}

/// A bounded store of sealed chunks by name (oldest dropped first past `limit` bytes).
final class SealedChunks: @unchecked Sendable {
    private let lock = NSLock()
    private var chunks: [ContentHash: Data] = [:]
    private var order: [ContentHash] = []
    private var head = 0
    private var bytes = 0
    static let limit = 64 << 20

    func put(_ name: ContentHash, _ sealed: Data) {
        lock.withLock {
            guard chunks[name] == nil else { return }
            chunks[name] = sealed
            order.append(name)
            bytes += sealed.count
            while bytes > Self.limit, head < order.count {
                if let gone = chunks.removeValue(forKey: order[head]) { bytes -= gone.count }
                head += 1
            }
            if head > 4096, head * 2 > order.count { order.removeFirst(head); head = 0 }
        }
    }

    func take(_ name: ContentHash) -> Data? {
        lock.withLock {
            guard let c = chunks.removeValue(forKey: name) else { return nil }
            bytes -= c.count
            return c
        }
    }
}

/// How a device names chunks: SHA-256 of their bytes (a plain account), or of their sealed
/// bytes (an end-to-end encrypted one). Everything that names or checks a chunk on a device
/// goes through one of these, so the engine works the same on both kinds of account.
public struct ChunkNaming: Sendable {
    let fixed: ChunkCipher?
    let shared: SharedKeyring?
    /// Sealed chunks are kept for their upload (the naming of a folder's hashing, not of checks).
    public let keepsSealed: Bool

    /// The cipher chunks are sealed and named with now; nil for a plain account.
    public var cipher: ChunkCipher? { shared?.keys.current.chunks ?? fixed }

    public init(cipher: ChunkCipher?, keepsSealed: Bool = false) {
        fixed = cipher
        shared = nil
        self.keepsSealed = keepsSealed
    }

    /// Naming with the newest key of `keys`, whichever that is when a chunk is named.
    public init(keys: SharedKeyring, keepsSealed: Bool = false) {
        fixed = nil
        shared = keys
        self.keepsSealed = keepsSealed
    }

    /// SHA-256 of the bytes.
    public static let plain = ChunkNaming(cipher: nil)

    /// How many generations of the account's key name chunks (1 for a plain account): with
    /// several, one content may have been named two ways (sealed with an older key, and again
    /// with the newest by `ubiq rekey`).
    public var generations: Int { shared?.keys.epochs.count ?? 1 }

    /// The name of the chunk `buffer` holds.
    public func name(_ buffer: UnsafeRawBufferPointer) -> ContentHash {
        guard let cipher else { return .of(buffer: buffer) }
        return cipher.name(of: buffer, keeping: keepsSealed)
    }

    /// The name of the chunk `bytes`.
    public func name<C: ContiguousBytes>(_ bytes: C) -> ContentHash { bytes.withUnsafeBytes { name($0) } }

    /// The bytes the server stores for a chunk: the chunk itself, or sealed.
    public func stored(_ plain: UnsafeRawBufferPointer) -> [UInt8] { cipher?.seal(plain) ?? Array(plain) }

    /// How many bytes the server stores for a chunk of `size`.
    public func storedSize(_ size: Int) -> Int { cipher == nil ? size : size + ChunkCipher.overhead }
}
