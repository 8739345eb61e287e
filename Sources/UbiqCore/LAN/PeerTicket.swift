import Crypto
import Foundation

/// The server's word that one device of an account may fetch chunks of some containers from
/// the account's other devices in its room (#40, devices in one room): which account, which
/// device, the device's key (the one its TLS connections to peers must present), which
/// containers, and until when — at most `maxLifetime` after it was issued. Signed by the server
/// (Ed25519), so a peer checks it without asking the server; a peer serves nothing to a
/// connection without one valid for the container asked, and a hash alone never suffices (the
/// request must also name a version whose manifest lists the chunk).
///
/// The text form is `pt1.` + base64url of the payload (JSON) + `.` + base64url of the signature
/// over those payload bytes; the signature is checked before the payload is read.
public struct PeerTicket: Equatable, Sendable, Codable {
    /// The account, as the server names it.
    public var account: String
    /// The device it was issued to.
    public var device: DeviceID
    /// The device's public key (32 bytes, Curve25519) its connections to peers present.
    public var deviceKey: [UInt8]
    /// The containers it lets the device fetch chunks of.
    public var containers: [ContainerID]
    /// When it was issued and until when it holds (whole seconds since 1970).
    public var issued: Int64
    public var expires: Int64

    /// The longest a ticket holds: a revoked device's tickets are refused by peers that hear of
    /// the revocation at once, and by all within this time.
    public static let maxLifetime: Int64 = 3600
    /// How far a peer's clock may be behind the server's and still take a just-issued ticket.
    public static let clockSkew: Int64 = 120
    /// The longest text form read (a ticket of many containers stays well under it).
    public static let maxTextBytes = 4096
    static let prefix = "pt1."

    public init(account: String, device: DeviceID, deviceKey: [UInt8], containers: [ContainerID], issued: Int64, expires: Int64) {
        self.account = account; self.device = device; self.deviceKey = deviceKey
        self.containers = containers; self.issued = issued; self.expires = expires
    }
}

/// Issues peer tickets: the server's signing key (derived from its own key material by the
/// caller, kept with it).
public struct PeerTicketIssuer: Sendable {
    let key: Curve25519.Signing.PrivateKey

    public init(key: Curve25519.Signing.PrivateKey) { self.key = key }

    /// The public key peers check tickets with.
    public var publicKey: Curve25519.Signing.PublicKey { key.publicKey }

    /// `ticket` signed, in its text form; `invalid_request` when it would hold longer than
    /// `PeerTicket.maxLifetime`, names no container or carries a key that is not 32 bytes.
    public func issue(_ ticket: PeerTicket) throws -> String {
        guard ticket.expires > ticket.issued, ticket.expires - ticket.issued <= PeerTicket.maxLifetime else {
            throw CoreError(.invalidRequest, "a peer ticket holds for at most \(PeerTicket.maxLifetime) s")
        }
        guard !ticket.containers.isEmpty, ticket.deviceKey.count == 32 else {
            throw CoreError(.invalidRequest, "a peer ticket names at least one container and a 32-byte device key")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let payload = Array(try encoder.encode(ticket))
        let signature = Array(try key.signature(for: payload))
        let text = PeerTicket.prefix + Base64URL.encode(payload) + "." + Base64URL.encode(signature)
        guard text.utf8.count <= PeerTicket.maxTextBytes else {
            throw CoreError(.invalidRequest, "a peer ticket of \(ticket.containers.count) containers is too long")
        }
        return text
    }
}

/// Checks peer tickets a connection presents, with the server's public key.
public struct PeerTicketCheck: Sendable {
    let serverKey: Curve25519.Signing.PublicKey

    public init(serverKey: Curve25519.Signing.PublicKey) { self.serverKey = serverKey }

    /// The ticket `text` holds, once its signature is the server's, it is for `account`, holds at
    /// `now` (seconds since 1970) and names `container`; `unauthorized` (not the server's, not
    /// this account's, expired or not yet valid, damaged) or `forbidden` (another container)
    /// otherwise. Hostile input: any bytes give one of those, never a crash.
    public func check(_ text: String, account: String, container: ContainerID, now: Int64) throws -> PeerTicket {
        let ticket = try open(text)
        guard ticket.account == account else { throw CoreError(.unauthorized, "the peer ticket is another account's") }
        guard ticket.issued - PeerTicket.clockSkew <= now, now < ticket.expires,
              ticket.expires - ticket.issued <= PeerTicket.maxLifetime else {
            throw CoreError(.unauthorized, "the peer ticket has expired or is not valid yet")
        }
        guard ticket.containers.contains(container) else {
            throw CoreError(.forbidden, "the peer ticket does not cover container \(container)")
        }
        return ticket
    }

    /// The ticket `text` holds once its signature is the server's (no other check).
    public func open(_ text: String) throws -> PeerTicket {
        func damaged() -> CoreError { CoreError(.unauthorized, "the peer ticket is damaged or not the server's") }
        guard text.utf8.count <= PeerTicket.maxTextBytes, text.hasPrefix(PeerTicket.prefix) else { throw damaged() }
        let parts = text.utf8.dropFirst(PeerTicket.prefix.utf8.count).split(separator: 0x2E, omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Base64URL.decode(Substring(parts[0]), limit: PeerTicket.maxTextBytes), let signature = Base64URL.decode(Substring(parts[1])),
              signature.count == 64, serverKey.isValidSignature(signature, for: payload) else { throw damaged() }
        guard let ticket = try? JSONDecoder().decode(PeerTicket.self, from: Data(payload)), ticket.deviceKey.count == 32 else { throw damaged() }
        return ticket
    }
}

/// Keys and secrets of the LAN design in text (base64url, unpadded), as the wire carries them.
public enum PeerKeyText {
    /// `bytes` as text.
    public static func text(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }
    /// The bytes of `text`; nil when it is not base64url or does not hold `count` bytes.
    public static func bytes(_ text: String, count: Int) -> [UInt8]? {
        guard let b = Base64URL.decode(text, limit: 256), b.count == count else { return nil }
        return b
    }
}
