import Crypto
import Foundation
import Testing
@testable import UbiqCore
import UbiqTesting

/// #39 §2 revocation, the pure part: a rolled key ring seals with its newest generation and
/// opens every one it holds; a ring from before the roll (the revoked device's) opens nothing
/// sealed after; names and setting keys stay the identity key's; the device list is the
/// devices' and not the server's.
@Suite("End-to-end encryption: key generations and the device list")
struct KeyRollTests {
    let notes = try! ContainerID(validating: "TEAM.com.example.notes")

    @Test func aRingReadsBackRollsAndKnowsWhatItHolds() throws {
        let one = AccountKeyring(AccountKey.generate())
        let two = one.rolled(), three = two.rolled()
        #expect(three.keys.map(\.epoch) == [1, 2, 3] && three.current.epoch == 3 && three.identity == one.current)
        #expect(try AccountKeyring(text: three.text) == three)
        #expect(try AccountKeyring(text: one.current.text) == one, "a single key's text is a ring of one")
        #expect(three.holds(one) && three.holds(two) && !two.holds(three) && !three.holds(AccountKeyring(AccountKey.generate())))
        for bad in ["", "ubiq-account-key-v1 1 AAAA", one.text + "\n" + one.text, "junk\n" + one.text] {
            #expect(throws: CoreError.self, "\(bad.prefix(40))") { try AccountKeyring(text: bad) }
        }
    }

    @Test func recordsAndSettingsSealedAfterARollOpenOnlyWithTheNewRing() throws {
        var rng = SeededRandom.forTest("e2e.roll.records")
        let before = AccountKeyring(AccountKey.generate()), after = before.rolled()
        let (old, new) = (before.keys(for: notes), after.keys(for: notes))
        let f = RecordCipher.Fields(modified: Date(timeIntervalSince1970: 1_700_000_000), permissions: 0o644, hash: ContentHash.of(rng.bytes(9)), size: 9)
        let v = VersionID(uuid: UUID()), i = ItemID(uuid: UUID())
        let sealedBefore = RecordCipher(ring: old).seal(f, version: v, item: i), sealedAfter = RecordCipher(ring: new).seal(f, version: v, item: i)
        #expect(!sealedBefore.contains(":") && sealedAfter.hasPrefix("e2:"))
        #expect(try RecordCipher(ring: new).open(sealedBefore, version: v, item: i) == f && RecordCipher(ring: new).open(sealedAfter, version: v, item: i) == f)
        #expect(throws: CoreError.self) { try RecordCipher(ring: old).open(sealedAfter, version: v, item: i) }
        do { _ = try RecordCipher(ring: old).open(sealedAfter, version: v, item: i) } catch let e as CoreError { #expect(e.code == .keyMissing, "\(e)") }
        for bad in ["e", "e1:AAAA", "e2:", "e2", "ex:" + sealedBefore, "e99:" + String(sealedAfter.dropFirst(3)), ":" + sealedBefore] {
            #expect(throws: CoreError.self, "\(bad.prefix(20))") { try RecordCipher(ring: new).open(bad, version: v, item: i) }
        }
        // Settings: the same token under both rings; a value written after opens only with the new one.
        let device = DeviceID(uuid: UUID())
        let e = KVEntry(key: "theme", value: .string("dark"), stamp: HLCTimestamp(wallMillis: 5, counter: 0), device: device)
        let (sOld, sNew) = (SettingsCipher(ring: old), SettingsCipher(ring: new))
        #expect(sOld.token("theme") == sNew.token("theme"))
        let written = sNew.seal(e)
        guard case .array(let a)? = written.value, a.first == .int(2) else { Issue.record("not a second-generation value: \(String(describing: written.value))"); return }
        #expect(try sNew.open(written) == e && sNew.open(sOld.seal(e)) == e)
        do { _ = try sOld.open(written); Issue.record("the old ring opened a value written after the roll") } catch let err as CoreError { #expect(err.code == .keyMissing) }
        for bad: KVValue in [.array([.int(1), a[1]]), .array([.int(2)]), .array([.string("2"), a[1]]), .array([.int(2), .string("x")])] {
            #expect(throws: CoreError.self) { try sNew.open(KVEntry(key: written.key, value: bad, stamp: e.stamp, device: device)) }
        }
    }

    @Test func chunksAndNamesAfterARoll() throws {
        let before = AccountKeyring(AccountKey.generate()), after = before.rolled()
        let (old, new) = (before.keys(for: notes), after.keys(for: notes))
        let chunk = Array("a chunk written after the roll".utf8)
        let sealed = new.current.chunks.seal(chunk)
        #expect(throws: CoreError.self) { try old.current.chunks.open(sealed.withUnsafeBytes { UnsafeRawBufferPointer($0) }) }
        #expect(try new.current.chunks.open(sealed.withUnsafeBytes { UnsafeRawBufferPointer($0) }) == chunk)
        #expect(ChunkNaming(cipher: new.current.chunks).name(chunk) != ChunkNaming(cipher: old.current.chunks).name(chunk))
        // Names keep one token: the identity key's.
        let p = try RelativePath(validating: "Reports/2026 plan.txt")
        #expect(try new.identity.names.seal(path: p) == old.identity.names.seal(path: p))
        // A shared ring: naming follows the newest key as soon as it arrives.
        let shared = SharedKeyring(before, container: notes)
        let naming = ChunkNaming(keys: shared)
        #expect(naming.name(chunk) == ChunkNaming(cipher: old.current.chunks).name(chunk))
        #expect(shared.update(after) && !shared.update(before) && shared.keys.current.epoch == 2)
        #expect(naming.name(chunk) == ContentHash.of(sealed))
    }

    @Test func theDeviceListIsTheDevicesAndNotTheServers() throws {
        let ring = AccountKeyring(AccountKey.generate()), next = ring.rolled()
        let recovery = RecoveryKey.generate()
        let devices = (0..<3).map { i in (Curve25519.KeyAgreement.PrivateKey(), "device-\(i)") }
        var list = DeviceKeyList(epoch: 1, entries: [DeviceKeyList.Entry(holder: "recovery", publicKey: recovery.agreementKey(user: "fay").publicKey.rawRepresentation, name: "recovery key")])
        for (k, n) in devices { list = try list.with(DeviceKeyList.Entry(holder: n, publicKey: k.publicKey.rawRepresentation, name: "名前 \(n)")) }
        let text = try list.text(ring)
        #expect(try DeviceKeyList(text: text, ring: ring) == list)
        #expect(try DeviceKeyList(text: text, ring: next) == list, "a newer ring holds the list's key")
        // The server adds its own key, drops a device, or reorders: tampered.
        let intruder = DeviceKeyList.Entry(holder: "server", publicKey: Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation, name: "x")
        let added = text.replacingOccurrences(of: "\nmac ", with: "\nserver \(intruder.publicKey.base64EncodedString()) eA==\nmac ")
        let lines = text.split(separator: "\n").map(String.init)
        let dropped = ([lines[0]] + lines[2...]).joined(separator: "\n")
        let forged = try DeviceKeyList(epoch: 1, entries: list.entries + [intruder]).text(AccountKeyring(AccountKey.generate()))
        for bad in [added, dropped, forged, String(text.dropLast(3)), "", "mac AAAA", text.replacingOccurrences(of: "v1 1", with: "v1 0")] {
            #expect(throws: CoreError.self, "\(bad.prefix(30))") { try DeviceKeyList(text: bad, ring: ring) }
        }
        // A list of a later generation than the ring holds: key_missing (look again, or approve).
        let later = try DeviceKeyList(epoch: 2, entries: list.entries).text(next)
        do { _ = try DeviceKeyList(text: later, ring: ring); Issue.record("opened") } catch let e as CoreError { #expect(e.code == .keyMissing) }
        // What a roll seals to a listed holder opens only with that holder's key.
        let sealed = try DeviceEnrolment.seal(next.text, to: devices[1].0.publicKey, user: "fay", holder: "device-1")
        #expect(try DeviceEnrolment.open(sealed, with: devices[1].0, user: "fay", holder: "device-1") == next.text)
        #expect(throws: CoreError.self) { try DeviceEnrolment.open(sealed, with: devices[2].0, user: "fay", holder: "device-1") }
        #expect(throws: CoreError.self) { try DeviceEnrolment.open(sealed, with: devices[1].0, user: "fay", holder: "device-2") }
        let toRecovery = try DeviceEnrolment.seal(next.text, to: recovery.agreementKey(user: "fay").publicKey, user: "fay", holder: "recovery")
        #expect(try DeviceEnrolment.open(toRecovery, with: RecoveryKey(typed: recovery.grouped).agreementKey(user: "fay"), user: "fay", holder: "recovery") == next.text)
        #expect(throws: CoreError.self) { try DeviceEnrolment.open(toRecovery, with: recovery.agreementKey(user: "gus"), user: "fay", holder: "recovery") }
    }
}
