import Crypto
import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqServer
import UbiqStorage
import UbiqTesting

/// `POST /v1/peers/ticket` (#40): the server vouches for a device's LAN key with a signed ticket,
/// lists the account's other devices that serve chunks, and stops vouching for a revoked one.
@Suite("Peer tickets from the server")
struct PeerTicketRouteTests {
    static let docs = try! ContainerID(validating: "iCloud.default")
    static let notes = try! ContainerID(validating: "com.example.notes")

    static func request(_ key: [UInt8], port: Int = 41000, containers: [ContainerID] = [docs]) -> PeerTicketRequest {
        PeerTicketRequest(deviceKey: PeerKeyText.text(key), port: port, addresses: ["192.168.1.20", "fd00::20"], containers: containers)
    }

    @Test(arguments: DatabaseKind.available) func devicesOfAnAccountGetTicketsAndFindEachOther(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, laptopID) = try await server.device("alice", name: "laptop")
            let (phone, phoneID) = try await server.device("alice", name: "phone")
            let (bob, _) = try await server.device("bob", name: "bobs")
            let laptopKey = Array(Curve25519.Signing.PrivateKey().publicKey.rawRepresentation)
            let phoneKey = Array(Curve25519.Signing.PrivateKey().publicKey.rawRepresentation)

            let first = try await laptop.peerTicket(Self.request(laptopKey))
            #expect(first.peers.isEmpty && first.revoked.isEmpty)
            let serverKey = try Curve25519.Signing.PublicKey(rawRepresentation: try #require(PeerKeyText.bytes(first.serverKey, count: 32)))
            let now = Int64(Date().timeIntervalSince1970)
            let ticket = try PeerTicketCheck(serverKey: serverKey).check(first.ticket, account: "alice", container: Self.docs, now: now)
            #expect(ticket.device == laptopID && ticket.deviceKey == laptopKey && ticket.containers == [Self.docs])
            #expect(ticket.expires - ticket.issued == PeerTicket.maxLifetime && first.expires == ticket.expires)
            // The ticket covers only what was asked.
            #expect(throws: CoreError.self) { try PeerTicketCheck(serverKey: serverKey).check(first.ticket, account: "alice", container: Self.notes, now: now) }

            // The phone finds the laptop (same address: this test's loopback), and the laptop the phone.
            let second = try await phone.peerTicket(Self.request(phoneKey, port: 41001, containers: [Self.docs, Self.notes]))
            #expect(second.peers.map(\.device) == [laptopID] && second.peers[0].port == 41000 && second.peers[0].name == "laptop")
            #expect(second.peers[0].deviceKey == PeerKeyText.text(laptopKey) && second.peers[0].addresses == ["192.168.1.20", "fd00::20"])
            #expect(second.lanSecret == first.lanSecret && second.serverKey == first.serverKey)
            #expect(try await laptop.peerTicket(Self.request(laptopKey)).peers.map(\.device) == [phoneID])
            // Another account sees none of them, and has its own LAN secret.
            let bobs = try await bob.peerTicket(Self.request(phoneKey))
            #expect(bobs.peers.isEmpty && bobs.lanSecret != first.lanSecret)
            // A device of no container the others sync finds none.
            let (tablet, tabletID) = try await server.device("alice", name: "tablet")
            #expect(try await tablet.peerTicket(Self.request(phoneKey, containers: [try ContainerID(validating: "com.example.other")])).peers.isEmpty)

            // Revoked: its requests are refused, the others no longer list it, peers are told to
            // refuse its tickets, and the LAN secret changes.
            try await laptop.revoke(device: phoneID)
            await expectCode(.unauthorized) { _ = try await phone.peerTicket(Self.request(phoneKey)) }
            let after = try await laptop.peerTicket(Self.request(laptopKey))
            #expect(!after.peers.map(\.device).contains(phoneID) && after.revoked == [phoneID])
            #expect(after.lanSecret != first.lanSecret)
            _ = tabletID
        }
    }

    /// Hostile requests: a key of another size, a port out of range, addresses that are not
    /// addresses or too many, no containers or too many — each a clear `invalid_value`.
    @Test func badRequestsAreRefusedWithTheirReason() async throws {
        try await withServer(.sqlite) { server in
            let (laptop, _) = try await server.device("alice", name: "laptop")
            let key = [UInt8](repeating: 7, count: 32)
            let bad: [PeerTicketRequest] = [
                PeerTicketRequest(deviceKey: PeerKeyText.text([1, 2, 3]), port: 41000, addresses: [], containers: [Self.docs]),
                PeerTicketRequest(deviceKey: "not base64!", port: 41000, addresses: [], containers: [Self.docs]),
                PeerTicketRequest(deviceKey: PeerKeyText.text(key), port: 0, addresses: [], containers: [Self.docs]),
                PeerTicketRequest(deviceKey: PeerKeyText.text(key), port: 70000, addresses: [], containers: [Self.docs]),
                PeerTicketRequest(deviceKey: PeerKeyText.text(key), port: 41000, addresses: ["example.org"], containers: [Self.docs]),
                PeerTicketRequest(deviceKey: PeerKeyText.text(key), port: 41000, addresses: Array(repeating: "10.0.0.1", count: 17), containers: [Self.docs]),
                PeerTicketRequest(deviceKey: PeerKeyText.text(key), port: 41000, addresses: [], containers: []),
                PeerTicketRequest(deviceKey: PeerKeyText.text(key), port: 41000, addresses: [],
                                  containers: (0..<33).map { try! ContainerID(validating: "c\($0)") }),
            ]
            for r in bad { await expectCode(.invalidValue) { _ = try await laptop.peerTicket(r) } }
            #expect(try await laptop.peerTicket(PeerTicketRequest(deviceKey: PeerKeyText.text(key), port: 41000, addresses: [], containers: [Self.docs])).peers.isEmpty)
        }
    }
}
