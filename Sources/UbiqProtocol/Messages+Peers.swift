import Foundation
import UbiqCore

/// `POST /v1/peers/ticket` (#40, devices in one room): a device says where on its LAN it serves
/// chunks and with which key, and for which containers it wants to fetch from its peers.
public struct PeerTicketRequest: Codable, Sendable, Equatable {
    /// The device's Curve25519 public key (base64url, 32 bytes): its TLS connections to peers present it.
    public var deviceKey: String
    /// The TCP port it serves chunks on (1–65535).
    public var port: Int
    /// Its LAN addresses (IPv4 or IPv6 literals), at most `WireLimits.maxPeerAddresses`.
    public var addresses: [String]
    /// The containers it syncs, at most `WireLimits.maxPeerContainers`.
    public var containers: [ContainerID]
    public init(deviceKey: String, port: Int, addresses: [String], containers: [ContainerID]) {
        self.deviceKey = deviceKey; self.port = port; self.addresses = addresses; self.containers = containers
    }
}

/// One of the account's other devices that asked for a ticket lately, and where it serves.
public struct PeerEndpoint: Codable, Sendable, Equatable {
    public var device: DeviceID
    public var name: String
    public var deviceKey: String
    public var port: Int
    public var addresses: [String]
    /// The address the server saw its requests come from (devices behind one public address
    /// are likely in one room: listed first).
    public var seenFrom: String?
    public init(device: DeviceID, name: String, deviceKey: String, port: Int, addresses: [String], seenFrom: String?) {
        self.device = device; self.name = name; self.deviceKey = deviceKey; self.port = port; self.addresses = addresses; self.seenFrom = seenFrom
    }
}

/// The answer: the ticket, the key tickets are checked with, the account's LAN secret (for
/// announcements; `LANKey.derive`) and the account's other devices that serve chunks, nearby first.
public struct PeerTicketResponse: Codable, Sendable, Equatable {
    public var ticket: String
    /// Until when the ticket holds (seconds since 1970).
    public var expires: Int64
    /// The server's Ed25519 public key (base64url): peers check tickets with it.
    public var serverKey: String
    /// The account's LAN secret (base64url); it changes when a device of the account is revoked.
    public var lanSecret: String
    public var peers: [PeerEndpoint]
    /// The account's signed-out and revoked devices: a peer refuses their tickets, which may
    /// not have expired yet.
    public var revoked: [DeviceID]
    public init(ticket: String, expires: Int64, serverKey: String, lanSecret: String, peers: [PeerEndpoint], revoked: [DeviceID]) {
        self.ticket = ticket; self.expires = expires; self.serverKey = serverKey; self.lanSecret = lanSecret; self.peers = peers
        self.revoked = revoked
    }
}

extension WireLimits {
    /// LAN addresses one device may register.
    public static let maxPeerAddresses = 16
    /// Containers one peer ticket may name.
    public static let maxPeerContainers = 32
}
