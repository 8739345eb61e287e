import Crypto
import Foundation
import Hummingbird
import NIOCore
import UbiqCore
import UbiqProtocol
import UbiqStorage

/// `/v1/peers/ticket` (#40, devices in one room): the server is the authority on which devices
/// may fetch chunks from each other. A signed-in device says where it serves chunks and with
/// which key; it gets a peer ticket for its containers (an hour at most), the key peers check
/// tickets with, the account's LAN secret, the account's other devices that serve chunks of
/// those containers (same public address first) and the devices whose tickets peers must
/// refuse (signed out or revoked).
struct PeerRoutes: Sendable {
    let auth: Authenticator
    let admin: any AccountAdminStore
    let peers: PeerRegistry
    /// The server's key ring (tickets are signed, LAN secrets derived, with its current key);
    /// nil on a server that seals no chunks.
    let ring: ServerKeyRing?
    let clock: @Sendable () -> Date

    /// How long a ticket holds.
    static let lifetime: Int64 = PeerTicket.maxLifetime

    func add(to router: Router<UbiqRequestContext>) {
        router.post("/v1/peers/ticket") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let body = try await request.decodeJSON(PeerTicketRequest.self, limit: 64 << 10)
            guard let ring = self.ring else { throw APIFailure(.invalidRequest, "this server holds no key to sign peer tickets with") }
            guard let key = PeerKeyText.bytes(body.deviceKey, count: 32) else {
                throw APIFailure(.invalidValue, "deviceKey must be 32 bytes in base64url")
            }
            guard (1...65535).contains(body.port) else { throw APIFailure(.invalidValue, "port must be 1-65535") }
            guard body.addresses.count <= WireLimits.maxPeerAddresses,
                  body.addresses.allSatisfy({ $0.utf8.count <= 64 && (try? SocketAddress(ipAddress: $0, port: 0)) != nil }) else {
                throw APIFailure(.invalidValue, "addresses must be at most \(WireLimits.maxPeerAddresses) IPv4 or IPv6 addresses")
            }
            let containers = Array(Set(body.containers)).sorted()
            guard (1...WireLimits.maxPeerContainers).contains(containers.count) else {
                throw APIFailure(.invalidValue, "a peer ticket names 1-\(WireLimits.maxPeerContainers) containers")
            }
            let issued = Int64(self.clock().timeIntervalSince1970), expires = issued + Self.lifetime
            let issuer = PeerTicketIssuer(key: Self.signingKey(ring))
            let ticket = try issuer.issue(PeerTicket(account: ctx.user, device: ctx.deviceID, deviceKey: key, containers: containers,
                                                     issued: issued, expires: expires))
            let devices = try await self.admin.devices(accountID: ctx.accountID)
            let revoked = devices.filter { !$0.signedIn }.map(\.id).sorted()
            let endpoint = PeerEndpoint(device: ctx.deviceID, name: ctx.deviceName, deviceKey: body.deviceKey, port: body.port,
                                        addresses: body.addresses, seenFrom: context.peer)
            let listed = await self.peers.register(account: ctx.accountID, endpoint, containers: containers, expires: expires, now: issued)
            return try json(PeerTicketResponse(ticket: ticket, expires: expires, serverKey: PeerKeyText.text(Array(issuer.publicKey.rawRepresentation)),
                                               lanSecret: PeerKeyText.text(Self.lanSecret(ring, account: ctx.accountID, revoked: revoked)),
                                               peers: listed.filter { !revoked.contains($0.device) }, revoked: revoked))
        }
    }

    /// The server's ticket-signing key: derived from its current key (so every server of a
    /// fleet, sharing the key file, signs alike; a key rotation gives a new one, which devices
    /// learn with their next ticket).
    static func signingKey(_ ring: ServerKeyRing) -> Curve25519.Signing.PrivateKey {
        let raw = HKDF<SHA256>.deriveKey(inputKeyMaterial: ring.current, salt: Array("ubiq-peer-ticket-v1".utf8), info: [], outputByteCount: 32)
        return try! Curve25519.Signing.PrivateKey(rawRepresentation: raw.withUnsafeBytes { Array($0) })
    }

    /// The account's LAN secret: derived from the server's key, the account and its revoked
    /// devices — so it changes when a device is revoked (or signs out), and a revoked device's
    /// announcements stop being recognised, and it stops recognising the others'.
    static func lanSecret(_ ring: ServerKeyRing, account: Int64, revoked: [DeviceID]) -> [UInt8] {
        let info = Array(("\(account)\n" + revoked.map(\.description).joined(separator: "\n")).utf8)
        return HKDF<SHA256>.deriveKey(inputKeyMaterial: ring.current, salt: Array("ubiq-lan-secret-v1".utf8), info: info, outputByteCount: 32)
            .withUnsafeBytes { Array($0) }
    }
}
