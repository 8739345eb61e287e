import Crypto
import Foundation
import Testing
import UbiqCore
import UbiqTesting

/// Peer tickets (#40): the server's signed word that a device may fetch chunks of some
/// containers from its account's devices in the room.
@Suite("Peer tickets")
struct PeerTicketTests {
    static let docs = try! ContainerID(validating: "iCloud.default")

    static func key(_ rng: inout SeededRandom) -> Curve25519.Signing.PrivateKey {
        try! Curve25519.Signing.PrivateKey(rawRepresentation: (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }

    static func ticket(_ rng: inout SeededRandom, issued: Int64 = 1_800_000_000, lifetime: Int64 = 3600) -> PeerTicket {
        PeerTicket(account: "alice", device: DeviceID(uuid: UUID()), deviceKey: (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) },
                   containers: [docs, try! ContainerID(validating: "com.example.notes")], issued: issued, expires: issued + lifetime)
    }

    @Test func aTicketTheServerIssuedHoldsForItsAccountContainersAndTime() throws {
        var rng = SeededRandom.forTest("peer-ticket.good")
        let issuer = PeerTicketIssuer(key: Self.key(&rng))
        let t = Self.ticket(&rng)
        let text = try issuer.issue(t)
        let check = PeerTicketCheck(serverKey: issuer.publicKey)
        for now in [t.issued - PeerTicket.clockSkew, t.issued, t.expires - 1] {
            #expect(try check.check(text, account: "alice", container: Self.docs, now: now) == t, "at \(now), seed \(rng.seed)")
        }
        #expect(try check.check(text, account: "alice", container: ContainerID(validating: "com.example.notes"), now: t.issued) == t)
    }

    @Test func everyOtherTicketIsRefusedWithItsReason() throws {
        var rng = SeededRandom.forTest("peer-ticket.refused")
        let issuer = PeerTicketIssuer(key: Self.key(&rng)), stranger = PeerTicketIssuer(key: Self.key(&rng))
        let t = Self.ticket(&rng)
        let text = try issuer.issue(t)
        let check = PeerTicketCheck(serverKey: issuer.publicKey)
        func code(_ text: String, account: String = "alice", container: ContainerID = Self.docs, now: Int64? = nil) -> ErrorCode? {
            do { _ = try check.check(text, account: account, container: container, now: now ?? t.issued); return nil } catch let e as CoreError { return e.code } catch { return nil }
        }
        #expect(code(text, account: "bob") == .unauthorized)  // another account's
        #expect(code(text, now: t.expires) == .unauthorized)  // expired
        #expect(code(text, now: t.issued - PeerTicket.clockSkew - 1) == .unauthorized)  // not valid yet
        #expect(code(text, container: try ContainerID(validating: "com.example.other")) == .forbidden)  // another container
        #expect(code(try stranger.issue(t)) == .unauthorized)  // another server's
        // A ticket that would hold past the longest lifetime is not issued.
        #expect(throws: CoreError.self) { try issuer.issue(Self.ticket(&rng, lifetime: PeerTicket.maxLifetime + 1)) }
        // The payload changed under the signature: a later expiry, another device.
        let parts = text.dropFirst(4).split(separator: ".")
        let forged = "pt1." + (try issuer.issue(PeerTicket(account: t.account, device: t.device, deviceKey: t.deviceKey, containers: t.containers,
                                                           issued: t.issued, expires: t.issued + 60))).dropFirst(4).split(separator: ".")[0] + "." + parts[1]
        #expect(code(forged) == .unauthorized)
        #expect(code(String(text.dropLast())) == .unauthorized)
        #expect(code("") == .unauthorized && code("pt1.") == .unauthorized && code("pt1..") == .unauthorized)
        #expect(code(String(repeating: "A", count: 100_000)) == .unauthorized)
    }

    /// Hostile text: seeded damage to a good ticket (flips, cuts, insertions, swaps of its two
    /// parts) and random text never crash, and whatever is taken is the ticket issued.
    @Test func damagedTicketsAreRefusedNeverMisread() throws {
        var rng = SeededRandom.forTest("peer-ticket.fuzz")
        let issuer = PeerTicketIssuer(key: Self.key(&rng))
        let t = Self.ticket(&rng)
        let text = Array(try issuer.issue(t).utf8)
        let check = PeerTicketCheck(serverKey: issuer.publicKey)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ \u{0}é".utf8)
        var taken = 0
        for round in 0..<3000 {
            var b = text
            switch round % 5 {
            case 0: let i = Int.random(in: 0..<b.count, using: &rng); b[i] = alphabet.randomElement(using: &rng)!
            case 1: b.removeSubrange(Int.random(in: 0..<b.count, using: &rng)...)
            case 2: b.insert(alphabet.randomElement(using: &rng)!, at: Int.random(in: 0...b.count, using: &rng))
            case 3: b = (0..<Int.random(in: 0...600, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            default: let i = Int.random(in: 0..<b.count, using: &rng); b[i] ^= UInt8(1 << Int.random(in: 0...7, using: &rng))
            }
            let s = String(decoding: b, as: UTF8.self)
            if let got = try? check.check(s, account: "alice", container: Self.docs, now: t.issued) {
                taken += 1
                #expect(got == t, "round \(round), seed \(rng.seed): \(s)")
            }
        }
        #expect(taken < 3000, "seed \(rng.seed)")
    }
}
