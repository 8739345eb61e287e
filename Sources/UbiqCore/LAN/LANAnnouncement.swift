import Crypto
import Foundation

/// What a device says on its LAN so the account's other devices there find it (#40): a random
/// instance ID (new each time the device starts), the port it serves chunks on, the time in
/// minutes, a random nonce, and a MAC under the account's LAN key over all of it. Nothing in it
/// names the account or the device to a stranger: without the key the packet is 72 bytes of
/// noise and a port (the lesson of Dropbox's broadcasts, which carried namespace IDs in clear,
/// and of Syncthing's, which carry the device ID). Who the sender is, and that it may be asked
/// for chunks, is settled afterwards by mutual TLS and the server's peer tickets; an
/// announcement only says "try this address".
///
/// Wire form (big-endian): magic `UBQL` (4), version 1 (1), reserved 0 (1), port (2), minutes
/// since 1970 (4), instance ID (16), nonce (16), HMAC-SHA256 truncated (28) — 72 bytes.
public struct LANAnnouncement: Equatable, Sendable {
    /// Random per start of the device's LAN service: lets a listener tell its own packets and
    /// repeats apart without naming the device.
    public var instance: [UInt8]
    /// The TCP port the sender serves chunks on.
    public var port: UInt16
    /// When it was sent, in whole minutes since 1970 (a listener drops packets far from its
    /// own clock: a recorded packet replayed later says nothing new).
    public var minute: UInt32
    /// Random per packet.
    public var nonce: [UInt8]

    public static let size = 72
    /// How many minutes a packet's time may be from the listener's.
    public static let minuteSkew: UInt32 = 5
    static let magic: [UInt8] = Array("UBQL".utf8)
    static let version: UInt8 = 1
    static let macBytes = 28

    public init(instance: [UInt8], port: UInt16, minute: UInt32, nonce: [UInt8]) {
        precondition(instance.count == 16 && nonce.count == 16, "instance and nonce are 16 bytes")
        self.instance = instance; self.port = port; self.minute = minute; self.nonce = nonce
    }

    /// Minutes since 1970 at `date` (0 before it; clamped at the far end).
    public static func minute(of date: Date) -> UInt32 {
        UInt32(clamping: max(0, Int64(date.timeIntervalSince1970 / 60)))
    }

    /// The packet, its MAC made with `key`.
    public func packet(key: SymmetricKey) -> [UInt8] {
        var out = body
        out += HMAC<SHA256>.authenticationCode(for: body, using: key).prefix(Self.macBytes)
        return out
    }

    private var body: [UInt8] {
        var out = Self.magic + [Self.version, 0]
        out += [UInt8(port >> 8), UInt8(port & 0xFF)]
        out += [UInt8(minute >> 24), UInt8(minute >> 16 & 0xFF), UInt8(minute >> 8 & 0xFF), UInt8(minute & 0xFF)]
        out += instance + nonce
        return out
    }

    /// The announcement in `packet` when its MAC is one of `keys` (a device holds the LAN keys
    /// of each account it syncs) and its time is within `minuteSkew` of `now`, with the index of
    /// the key; nil for anything else — another program's packet, a stranger's, a damaged or an
    /// old one. Hostile bytes from the LAN: never a crash, constant work.
    public static func read(_ packet: [UInt8], keys: [SymmetricKey], now: Date) -> (LANAnnouncement, key: Int)? {
        guard packet.count == size, Array(packet[0..<4]) == magic, packet[4] == version else { return nil }
        let body = Array(packet[0..<(size - macBytes)]), mac = Array(packet[(size - macBytes)...])
        guard let key = keys.firstIndex(where: { k in
            // Compared in constant time (the truncated code's bytes, XORed and ORed together).
            let want = Array(HMAC<SHA256>.authenticationCode(for: body, using: k).prefix(macBytes))
            return zip(want, mac).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        }) else { return nil }
        let port = UInt16(packet[6]) << 8 | UInt16(packet[7])
        let minute = packet[8..<12].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let mine = Self.minute(of: now)
        guard port != 0, (minute > mine ? minute - mine : mine - minute) <= minuteSkew else { return nil }
        return (LANAnnouncement(instance: Array(packet[12..<28]), port: port, minute: minute, nonce: Array(packet[28..<44])), key)
    }
}

/// The key an account's devices MAC their LAN announcements with: derived from a secret the
/// server gives each signed-in device of the account (HKDF-SHA256), so a device signed out or
/// revoked stops recognising — and being recognised by — the others once the secret is rolled.
public enum LANKey {
    /// The LAN key from the account's LAN secret.
    public static func derive(secret: [UInt8], account: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret), salt: Array("ubiq-lan-v1".utf8),
                               info: Array(account.utf8), outputByteCount: 32)
    }
}
