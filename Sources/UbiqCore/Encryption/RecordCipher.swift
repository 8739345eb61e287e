import Crypto
import Foundation

/// Seals what a version's record says that the server need not know — the file's modification
/// time and permissions — with the content hash and size it was committed with, bound to the
/// item and the version (AES-256-GCM, both IDs as associated data). The server keeps it
/// (`VersionRecord.sealed`) and hands it back; a device opens it and checks it against the
/// record around it, so a version pointed at another content, a record copied from another
/// version, a version shown under another item, or a time the server made up is caught
/// (`tampered`).
///
/// A new file whose path the server already has from another device joins that item; on an
/// encrypted account the server refuses such a commit and names the item instead, and the
/// device seals the record again for it (`SealedSyncServer`), so every record stays bound to
/// the item it is filed under. Records sealed before items were bound (`ubiq-record-e2e-v1`)
/// still open, bound to their version only.
///
/// A record sealed with a key past the first generation says its epoch in the clear
/// (`e2:BASE64`), so a device opens it with the key it was sealed with.
public struct RecordCipher: Sendable {
    let ring: ContainerKeyring

    /// Seals with `keys`, opens what they sealed.
    public init(keys: ContainerKeys) { ring = ContainerKeyring(keys) }

    /// Seals with the ring's newest keys, opens what any of its generations sealed.
    public init(ring: ContainerKeyring) { self.ring = ring }

    /// What the sealed record holds.
    public struct Fields: Equatable, Sendable {
        public var modified: Date
        public var permissions: Int?
        public var hash: ContentHash
        public var size: Int
        /// The version's place in its item's history: its base's generation + 1 (1 for a first
        /// version). A device refuses a current version older than one it has seen
        /// (`RollbackCheck`): the server cannot show an old version as current. Nil in records
        /// sealed before generations were.
        public var generation: UInt32?
        public init(modified: Date, permissions: Int?, hash: ContentHash, size: Int, generation: UInt32? = nil) {
            self.modified = modified; self.permissions = permissions; self.hash = hash; self.size = size; self.generation = generation
        }
    }

    /// A record's sealed bytes without a generation: time, permissions, size, hash (hex).
    static let plainBytes = 8 + 4 + 8 + 64

    func associated(_ version: VersionID, item: ItemID) -> [UInt8] { Array("ubiq-record-e2e-v2\n\(item)\n\(version)".utf8) }
    /// What records sealed before they were bound to their item were bound to.
    func legacyAssociated(_ version: VersionID) -> [UInt8] { Array("ubiq-record-e2e-v1\n\(version)".utf8) }

    /// The fields sealed for `version` of `item`, as text.
    public func seal(_ f: Fields, version: VersionID, item: ItemID) -> String { seal(f, associated: associated(version, item: item)) }

    func seal(_ f: Fields, associated: [UInt8]) -> String {
        var plain: [UInt8] = []
        withUnsafeBytes(of: f.modified.timeIntervalSince1970.bitPattern.littleEndian) { plain += $0 }
        withUnsafeBytes(of: Int32(f.permissions ?? -1).littleEndian) { plain += $0 }
        withUnsafeBytes(of: Int64(f.size).littleEndian) { plain += $0 }
        f.hash.withHex { plain += $0 }
        if let g = f.generation { withUnsafeBytes(of: g.littleEndian) { plain += $0 } }
        let keys = ring.current
        let box = try! AES.GCM.seal(plain, using: keys.records, authenticating: associated)
        let text = box.combined!.base64EncodedString()
        return keys.epoch == 1 ? text : "e\(keys.epoch):\(text)"
    }

    /// The generation of the key a sealed record says it was sealed with (1 without a prefix);
    /// nil when its prefix is malformed. The server compares it with the account's newest.
    public static func epoch(of sealed: String) -> Int? { split(sealed)?.epoch }

    /// The epoch a sealed record names and its sealed part; nil when the prefix is malformed.
    static func split(_ sealed: String) -> (epoch: Int, body: Substring)? {
        // Over the bytes: a walk over `Character`s of every record a device opened was 2 % of
        // the CPU of syncing 10,000 small files. Base64 has no ':'; an index of the UTF-8 view
        // at an ASCII byte is one of the string.
        let u = sealed.utf8
        guard let dot = u.firstIndex(of: 0x3A) else { return (1, sealed[...]) }
        guard u.first == 0x65, let epoch = Int(sealed[u.index(after: u.startIndex)..<dot]), epoch >= 2 else { return nil }
        return (epoch, sealed[u.index(after: dot)...])
    }

    /// The fields `sealed` holds for `version` of `item`; `tampered` when it does not open there
    /// (sealed for another version or another item), `key_missing` when it was sealed with a
    /// generation of the key this ring lacks.
    public func open(_ sealed: String, version: VersionID, item: ItemID) throws -> Fields {
        guard sealed.utf8.count <= 1024, let (epoch, body) = Self.split(sealed) else {
            throw CoreError(.tampered, "the record of version \(version) is damaged")
        }
        let key = try ring.keys(epoch: epoch).records
        guard let data = Data(base64Encoded: String(body)), let box = try? AES.GCM.SealedBox(combined: data),
              let plain = (try? AES.GCM.open(box, using: key, authenticating: associated(version, item: item)))
                ?? (try? AES.GCM.open(box, using: key, authenticating: legacyAssociated(version))),
              plain.count == Self.plainBytes || plain.count == Self.plainBytes + 4 else {
            throw CoreError(.tampered, "the record of version \(version) did not open as item \(item)'s with this account's key")
        }
        let b = Array(plain)
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[at + $1]) << (8 * UInt64($1)) } }
        let perms = Int32(bitPattern: (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[8 + $1]) << (8 * UInt32($1)) })
        guard let hash = ContentHash(hexIn: b[20..<Self.plainBytes]) else { throw CoreError(.tampered, "the record of version \(version) is damaged") }
        let generation = b.count > Self.plainBytes ? (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[Self.plainBytes + $1]) << (8 * UInt32($1)) } : nil
        return Fields(modified: Date(timeIntervalSince1970: Double(bitPattern: u64(0))), permissions: perms < 0 ? nil : Int(perms),
                      hash: hash, size: Int(Int64(bitPattern: u64(12))), generation: generation)
    }
}
