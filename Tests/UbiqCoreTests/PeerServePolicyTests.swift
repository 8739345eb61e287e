import Crypto
import Foundation
import Testing
import UbiqCore
import UbiqTesting

/// What a device serves a peer (#40): a valid ticket of its account for the container, from the
/// device the ticket vouches for, not revoked, naming a version it holds that lists every chunk.
@Suite("Serving peers")
struct PeerServePolicyTests {
    static let docs = try! ContainerID(validating: "iCloud.default")
    static let notes = try! ContainerID(validating: "com.example.notes")

    @Test func onlyAValidTicketNamingAVersionThatListsTheChunksIsServed() throws {
        var rng = SeededRandom.forTest("peer-serve")
        let server = try Curve25519.Signing.PrivateKey(rawRepresentation: (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) })
        let issuer = PeerTicketIssuer(key: server)
        let asker = DeviceID(uuid: UUID()), revokedDevice = DeviceID(uuid: UUID())
        let askerKey = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let now: Int64 = 1_800_000_000
        func ticket(_ device: DeviceID, containers: [ContainerID] = [Self.docs], account: String = "alice") throws -> String {
            try issuer.issue(PeerTicket(account: account, device: device, deviceKey: askerKey, containers: containers, issued: now, expires: now + 600))
        }
        let file = Manifest.of((0..<300_000).map { _ in UInt8.random(in: 0...255, using: &rng) })
        let other = Manifest.of((0..<10_000).map { _ in UInt8.random(in: 0...255, using: &rng) })
        let version = VersionID(uuid: UUID()), otherVersion = VersionID(uuid: UUID())
        let held: [VersionID: Manifest] = [version: file, otherVersion: other]
        let policy = PeerServePolicy(check: PeerTicketCheck(serverKey: server.publicKey), account: "alice", revoked: [revokedDevice])
        func code(_ r: PeerChunkRequest, key: [UInt8]? = nil, at: Int64 = now) -> ErrorCode? {
            do {
                _ = try policy.decide(r, connectionKey: key ?? askerKey, now: at) { c, v in c == Self.docs ? held[v] : nil }
                return nil
            } catch let e as CoreError { return e.code } catch { return .internalError }
        }
        let good = PeerChunkRequest(ticket: try ticket(asker), container: Self.docs, version: version, hashes: file.chunks.map(\.hash))
        #expect(file.chunks.count > 1 && code(good) == nil)
        #expect(try policy.decide(good, connectionKey: askerKey, now: now) { _, v in held[v] }.device == asker)

        var r = good
        r.hashes = [other.chunks[0].hash]  // a real chunk of the account, but not of the version named
        #expect(code(r) == .forbidden)
        r = good; r.hashes = good.hashes + [other.chunks[0].hash]
        #expect(code(r) == .forbidden)
        r = good; r.version = VersionID(uuid: UUID())  // a version not held here
        #expect(code(r) == .notFound)
        r = good; r.container = Self.notes  // the ticket does not name it
        #expect(code(r) == .forbidden)
        r = good; r.ticket = try ticket(asker, containers: [Self.docs, Self.notes]); r.container = Self.notes  // named, but no such version there
        #expect(code(r) == .notFound)
        #expect(code(good, key: [UInt8](repeating: 1, count: 32)) == .unauthorized)  // the ticket copied to another connection
        #expect(code(good, at: now + 600) == .unauthorized)  // expired
        r = good; r.ticket = try ticket(revokedDevice)
        #expect(code(r) == .unauthorized)  // revoked after the ticket was issued
        r = good; r.ticket = try ticket(asker, account: "bob")
        #expect(code(r) == .unauthorized)  // another account's device
        r = good; r.ticket = try PeerTicketIssuer(key: Curve25519.Signing.PrivateKey()).issue(
            PeerTicket(account: "alice", device: asker, deviceKey: askerKey, containers: [Self.docs], issued: now, expires: now + 600))
        #expect(code(r) == .unauthorized)  // not this server's
        r = good; r.hashes = []
        #expect(code(r) == .invalidRequest)
        r = good; r.hashes = Array(repeating: file.chunks[0].hash, count: PeerServePolicy.maxChunks + 1)
        #expect(code(r) == .invalidRequest)
    }
}
