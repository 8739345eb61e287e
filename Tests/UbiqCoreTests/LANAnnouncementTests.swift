import Crypto
import Foundation
import Testing
import UbiqCore
import UbiqTesting

/// LAN announcements (#40): found by the account's devices, noise to anyone else.
@Suite("LAN announcements")
struct LANAnnouncementTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func announcement(_ rng: inout SeededRandom) -> LANAnnouncement {
        LANAnnouncement(instance: (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }, port: 40123, minute: LANAnnouncement.minute(of: now),
                        nonce: (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }

    @Test func theAccountsDevicesReadItAndNoOneElseDoes() {
        var rng = SeededRandom.forTest("lan.read")
        let mine = LANKey.derive(secret: Array("secret-of-alice".utf8), account: "alice")
        let other = LANKey.derive(secret: Array("secret-of-bob".utf8), account: "bob")
        let sameSecretOtherAccount = LANKey.derive(secret: Array("secret-of-alice".utf8), account: "carol")
        let a = Self.announcement(&rng)
        let packet = a.packet(key: mine)
        #expect(packet.count == LANAnnouncement.size)
        let read = LANAnnouncement.read(packet, keys: [other, mine], now: Self.now)
        #expect(read?.0 == a && read?.key == 1, "seed \(rng.seed)")
        #expect(LANAnnouncement.read(packet, keys: [other, sameSecretOtherAccount], now: Self.now) == nil)
        // Minutes away from the listener's clock: an old packet replayed says nothing.
        #expect(LANAnnouncement.read(packet, keys: [mine], now: Self.now + 60 * Double(LANAnnouncement.minuteSkew)) != nil)
        #expect(LANAnnouncement.read(packet, keys: [mine], now: Self.now + 60 * Double(LANAnnouncement.minuteSkew + 1)) == nil)
        #expect(LANAnnouncement.read(packet, keys: [mine], now: Self.now - 60 * Double(LANAnnouncement.minuteSkew + 1)) == nil)
        // Each packet has its own nonce: two announcements of one device differ in every run.
        #expect(Self.announcement(&rng).packet(key: mine) != packet)
    }

    /// Nothing in a packet names the account or the device: the account name, the device's
    /// ID and the LAN secret appear nowhere in it, in any of a thousand packets.
    @Test func aPacketNamesNeitherAccountNorDevice() {
        var rng = SeededRandom.forTest("lan.anonymous")
        let secret = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let key = LANKey.derive(secret: secret, account: "alice@example.org")
        let device = DeviceID(uuid: UUID())
        let needles: [[UInt8]] = [Array("alice".utf8), Array(device.description.utf8), withUnsafeBytes(of: device.uuid.uuid) { Array($0) },
                                  Array(secret.prefix(8)), key.withUnsafeBytes { Array($0.prefix(8)) }]
        for _ in 0..<1000 {
            let p = Self.announcement(&rng).packet(key: key)
            for n in needles {
                #expect(!(0...(p.count - n.count)).contains { Array(p[$0..<$0 + n.count]) == n }, "seed \(rng.seed)")
            }
        }
    }

    /// Hostile packets from the LAN: seeded damage to a good packet and random bytes of any
    /// length are dropped, never misread, never a crash.
    @Test func damagedOrStrangePacketsAreDropped() {
        var rng = SeededRandom.forTest("lan.fuzz")
        let key = LANKey.derive(secret: Array("s".utf8), account: "alice")
        let a = Self.announcement(&rng)
        let good = a.packet(key: key)
        for round in 0..<5000 {
            var b = good
            switch round % 4 {
            case 0: b[Int.random(in: 0..<b.count, using: &rng)] ^= UInt8(1 << Int.random(in: 0...7, using: &rng))
            case 1: b.removeSubrange(Int.random(in: 0..<b.count, using: &rng)...)
            case 2: b.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...b.count, using: &rng))
            default: b = (0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            }
            let read = LANAnnouncement.read(b, keys: [key], now: Self.now)
            #expect(read == nil || (b == good && read?.0 == a), "round \(round), seed \(rng.seed)")
        }
        #expect(LANAnnouncement.read(good, keys: [key], now: Self.now)?.0 == a)
    }
}
