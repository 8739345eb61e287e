import Crypto
import Foundation

/// The devices of an end-to-end encrypted account that hold its key, each with the X25519
/// public key new generations of the key are sealed to — and the recovery key's (`recovery`).
///
/// The server keeps it (`devices` among the account's sealed keys) but cannot change it: it is
/// authenticated with HMAC-SHA256 under a key derived from the account key of its epoch, which
/// only the account's devices hold. So when a device rolls the key (revoking another), it seals
/// the new ring only to the keys on a list the devices made — a key the server slipped in is
/// refused (`tampered`).
public struct DeviceKeyList: Sendable, Equatable {
    /// One holder of the account key.
    public struct Entry: Sendable, Equatable {
        /// A device's ID in lower case, or `recovery`.
        public var holder: String
        /// Its X25519 public key (32 bytes).
        public var publicKey: Data
        /// A device's name as it signed in (shown; at most 64 bytes kept).
        public var name: String

        public init(holder: String, publicKey: Data, name: String) {
            self.holder = holder
            self.publicKey = publicKey
            self.name = String(decoding: Array(name.utf8.prefix(64)), as: UTF8.self)
        }
    }

    /// The sealed-key name it is kept under.
    public static let serverName = "devices"
    /// The recovery key's holder name.
    public static let recovery = "recovery"
    static let version = "ubiq-devices-v1"
    /// The most holders a list keeps (it travels in one server entry of at most 16 KiB).
    public static let maxEntries = 96

    /// The epoch of the key it is authenticated with.
    public var epoch: Int
    public var entries: [Entry]

    public init(epoch: Int, entries: [Entry]) {
        self.epoch = epoch
        self.entries = entries
    }

    /// The entry of `holder`, if listed.
    public func entry(_ holder: String) -> Entry? { entries.first { $0.holder == holder } }

    /// This list with `entry` in (replacing one of the same holder).
    public func with(_ entry: Entry) throws -> DeviceKeyList {
        var l = self
        l.entries.removeAll { $0.holder == entry.holder }
        guard l.entries.count < Self.maxEntries else {
            throw CoreError(.invalidValue, "an encrypted account lists at most \(Self.maxEntries) devices; revoke one first")
        }
        l.entries.append(entry)
        return l
    }

    /// This list without `holder`.
    public func without(_ holder: String) -> DeviceKeyList {
        var l = self
        l.entries.removeAll { $0.holder == holder }
        return l
    }

    /// The generation a list's text says it is of, read without its key (what the server can
    /// know: it refuses content sealed with an older one); nil when it is not a list.
    public static func epoch(of text: String) -> Int? {
        let head = text.prefix(64).split(separator: "\n", maxSplits: 1).first?.split(separator: " ")
        guard let head, head.count == 2, head[0] == Self.version, let n = Int(head[1]), n >= 1 else { return nil }
        return n
    }

    func body() -> String {
        var lines = ["\(Self.version) \(epoch)"]
        for e in entries { lines.append("\(e.holder) \(e.publicKey.base64EncodedString()) \(Data(e.name.utf8).base64EncodedString())") }
        return lines.joined(separator: "\n") + "\n"
    }

    static func mac(_ body: String, _ key: AccountKey) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Array(body.utf8), using: key.deriveAccount("devices"))).base64EncodedString()
    }

    /// The list as the server keeps it, authenticated with `ring`'s key of its epoch.
    public func text(_ ring: AccountKeyring) throws -> String {
        guard let key = ring.key(epoch: epoch) else { throw CoreError(.keyMissing, "this device does not hold the account's key of epoch \(epoch)") }
        let b = body()
        return b + "mac \(Self.mac(b, key))"
    }

    /// The list `text` holds, once its authentication checks with `ring`'s key of its epoch:
    /// `tampered` when it does not (the server changed it), `key_missing` when the ring lacks
    /// that key (it was rolled since this device last looked).
    public init(text: String, ring: AccountKeyring) throws {
        guard text.utf8.count <= 64 << 10, let cut = text.range(of: "\nmac ", options: .backwards) else {
            throw CoreError(.tampered, "the account's device list on the server is damaged")
        }
        let b = String(text[..<cut.lowerBound]) + "\n"
        var lines = b.split(separator: "\n").map(String.init)
        guard !lines.isEmpty else { throw CoreError(.tampered, "the account's device list on the server is damaged") }
        let head = lines.removeFirst().split(separator: " ")
        guard head.count == 2, head[0] == Self.version, let epoch = Int(head[1]) else {
            throw CoreError(.tampered, "the account's device list on the server is damaged")
        }
        guard let key = ring.key(epoch: epoch) else {
            throw CoreError(.keyMissing, "the account's device list is of key epoch \(epoch), which this device does not hold")
        }
        guard Self.mac(b, key) == String(text[cut.upperBound...]) else {
            throw CoreError(.tampered, "the account's device list on the server was not made by a device of the account")
        }
        var entries: [Entry] = []
        for line in lines {
            let f = line.split(separator: " ")
            guard f.count == 3, let raw = Data(base64Encoded: String(f[1])), raw.count == 32,
                  let name = Data(base64Encoded: String(f[2])).flatMap({ String(data: $0, encoding: .utf8) }) else {
                throw CoreError(.tampered, "the account's device list on the server is damaged")
            }
            entries.append(Entry(holder: String(f[0]), publicKey: raw, name: name))
        }
        self.init(epoch: epoch, entries: entries)
    }
}
