import Crypto
import Foundation

/// Seals what a version's record says that the server need not know — the file's modification
/// time and permissions — with the content hash and size it was committed with, bound to the
/// version (AES-256-GCM, its ID as associated data). The server keeps it
/// (`VersionRecord.sealed`) and hands it back; a device opens it and checks it against the
/// record around it, so a version pointed at another content, a record copied from another
/// version, or a time the server made up is caught (`tampered`).
///
/// Not bound to the item: the server rightly files a version under another item when two
/// devices create the same path (the second commit joins the first item). So the server can
/// still show one version of the account under another item; a device-signed link from items
/// to their versions is what would close that (`ThreatModel.md`).
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
        public init(modified: Date, permissions: Int?, hash: ContentHash, size: Int) {
            self.modified = modified; self.permissions = permissions; self.hash = hash; self.size = size
        }
    }

    func associated(_ version: VersionID) -> [UInt8] { Array("ubiq-record-e2e-v1\n\(version)".utf8) }

    /// The fields sealed for `version`, as text.
    public func seal(_ f: Fields, version: VersionID) -> String {
        var plain: [UInt8] = []
        withUnsafeBytes(of: f.modified.timeIntervalSince1970.bitPattern.littleEndian) { plain += $0 }
        withUnsafeBytes(of: Int32(f.permissions ?? -1).littleEndian) { plain += $0 }
        withUnsafeBytes(of: Int64(f.size).littleEndian) { plain += $0 }
        f.hash.withHex { plain += $0 }
        let keys = ring.current
        let box = try! AES.GCM.seal(plain, using: keys.records, authenticating: associated(version))
        let text = box.combined!.base64EncodedString()
        return keys.epoch == 1 ? text : "e\(keys.epoch):\(text)"
    }

    /// The generation of the key a sealed record says it was sealed with (1 without a prefix);
    /// nil when its prefix is malformed. The server compares it with the account's newest.
    public static func epoch(of sealed: String) -> Int? { split(sealed)?.epoch }

    /// The epoch a sealed record names and its sealed part; nil when the prefix is malformed.
    static func split(_ sealed: String) -> (epoch: Int, body: Substring)? {
        guard let dot = sealed.firstIndex(of: ":") else { return (1, sealed[...]) }  // base64 has no ':'
        guard sealed.hasPrefix("e"), let epoch = Int(sealed[sealed.index(after: sealed.startIndex)..<dot]), epoch >= 2 else { return nil }
        return (epoch, sealed[sealed.index(after: dot)...])
    }

    /// The fields `sealed` holds for `version`; `tampered` when it does not open there,
    /// `key_missing` when it was sealed with a generation of the key this ring lacks.
    public func open(_ sealed: String, version: VersionID) throws -> Fields {
        guard sealed.utf8.count <= 1024, let (epoch, body) = Self.split(sealed) else {
            throw CoreError(.tampered, "the record of version \(version) is damaged")
        }
        let key = try ring.keys(epoch: epoch).records
        guard let data = Data(base64Encoded: String(body)), let box = try? AES.GCM.SealedBox(combined: data),
              let plain = try? AES.GCM.open(box, using: key, authenticating: associated(version)), plain.count == 8 + 4 + 8 + 64 else {
            throw CoreError(.tampered, "the record of version \(version) did not open with this account's key")
        }
        let b = Array(plain)
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[at + $1]) << (8 * UInt64($1)) } }
        let perms = Int32(bitPattern: (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[8 + $1]) << (8 * UInt32($1)) })
        guard let hash = ContentHash(hexIn: b[20...]) else { throw CoreError(.tampered, "the record of version \(version) is damaged") }
        return Fields(modified: Date(timeIntervalSince1970: Double(bitPattern: u64(0))), permissions: perms < 0 ? nil : Int(perms),
                      hash: hash, size: Int(Int64(bitPattern: u64(12))))
    }
}
