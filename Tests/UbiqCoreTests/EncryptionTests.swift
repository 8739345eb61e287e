import Foundation
import Testing
@testable import UbiqCore
import UbiqTesting

/// #39 §2's keys and ciphers on their own: seeded properties (the seed is in each message).
@Suite("End-to-end encryption: keys and ciphers")
struct EncryptionTests {
    let notes = try! ContainerID(validating: "TEAM.com.example.notes")
    let other = try! ContainerID(validating: "TEAM.com.example.other")

    @Test func anAccountKeyReadsBackAndDamagedTextIsRefused() throws {
        let k = AccountKey.generate(epoch: 3)
        #expect(try AccountKey(text: k.text) == k && k.epoch == 3)
        #expect(k != AccountKey.generate(epoch: 3))
        for bad in ["", "ubiq-account-key-v1 1", "ubiq-account-key-v2 1 AAAA", "ubiq-account-key-v1 0 " + String(k.text.split(separator: " ")[2]),
                    "ubiq-account-key-v1 1 QUJD", String(k.text.dropLast(4))] {
            #expect(throws: CoreError.self, "\(bad)") { try AccountKey(text: bad) }
        }
    }

    @Test func chunksSealDeterministicallyOpenOnlyWithTheirKeyAndAreNamedByTheirSealedBytes() {
        var rng = SeededRandom.forTest("e2e.chunks")
        let key = AccountKey.generate()
        let c = key.keys(for: notes).chunks
        for _ in 0..<60 {
            let plain = rng.bytes(1 + Int(rng.next() % 140_000))
            let sealed = c.seal(plain)
            #expect(sealed.count == plain.count + ChunkCipher.overhead, "seed \(rng.seed)")
            #expect(c.seal(plain) == sealed, "deterministic; seed \(rng.seed)")
            #expect(sealed.withUnsafeBytes { try? c.open($0) } == plain, "seed \(rng.seed)")
            #expect(plain.withUnsafeBytes { c.name(of: $0) } == ContentHash.of(sealed), "seed \(rng.seed)")
            #expect(sealed.withUnsafeBytes { ContentHash.of(buffer: $0) } != ContentHash.of(plain))
            // Any flipped bit, a cut, another container's or epoch's key: tampered.
            var flipped = sealed
            flipped[Int(rng.next() % UInt64(flipped.count))] ^= UInt8(1 << (rng.next() % 8))
            for bad in [flipped, Array(sealed.dropLast(1 + Int(rng.next() % 16))), Array(sealed.prefix(10))] {
                #expect(throws: CoreError.self, "seed \(rng.seed)") { try bad.withUnsafeBytes { try c.open($0) } }
            }
            for k in [key.keys(for: other).chunks, AccountKey.generate().keys(for: notes).chunks] {
                #expect(throws: CoreError.self, "seed \(rng.seed)") { try sealed.withUnsafeBytes { try k.open($0) } }
                #expect(k.seal(plain) != sealed)
            }
        }
        // The same key at another epoch derives other keys.
        let next = try! AccountKey(text: key.text.replacingOccurrences(of: "v1 1 ", with: "v1 2 "))
        #expect(next.keys(for: notes).chunks.seal([1, 2, 3]) != c.seal([1, 2, 3]))
    }

    @Test func namingIsPlainSHA256OrTheSealedBytesHash() {
        let bytes: [UInt8] = Array("hello".utf8)
        #expect(ChunkNaming.plain.name(bytes) == ContentHash.of(bytes))
        let c = AccountKey.generate().keys(for: notes).chunks
        let sealed = ChunkNaming(cipher: c)
        #expect(sealed.name(bytes) == ContentHash.of(c.seal(bytes)) && sealed.storedSize(5) == 21)
        let m = Manifest.of(Array(repeating: 7, count: 300_000), chunker: Chunker.standard.named(sealed))
        #expect(m.isConsistent && m != Manifest.of(Array(repeating: 7, count: 300_000)))
    }

    @Test func namesSealToPathNamesOpenBackAndCarryTheServersRestoreSuffix() throws {
        var rng = SeededRandom.forTest("e2e.names")
        let names = AccountKey.generate().keys(for: notes).names
        let alphabet = Array("abcXYZ 019._-()éü日本語😀".unicodeScalars)
        var seenTokens: [String: String] = [:]
        for _ in 0..<300 {
            var name = ""
            let length = 1 + Int(rng.next() % 140)
            for _ in 0..<length { name.unicodeScalars.append(alphabet[Int(rng.next() % UInt64(alphabet.count))]) }
            name = name.precomposedStringWithCanonicalMapping
            guard name.utf8.count <= NameCipher.maxNameBytes, (try? RelativePath(validating: name)) != nil else { continue }
            let token = try names.seal(name: name)
            #expect(token.utf8.count <= 363 && (try? RelativePath(validating: token)) != nil, "seed \(rng.seed)")
            #expect(try names.open(name: token) == name, "seed \(rng.seed)")
            #expect(try names.seal(name: name) == token, "deterministic; seed \(rng.seed)")
            if let earlier = seenTokens[token] { #expect(earlier == name, "two names, one token; seed \(rng.seed)") }
            seenTokens[token] = name
        }
        // The longest name a folder holds (255 bytes) is kept, and fits with the server's
        // restore suffix; the restored name is cut to fit a folder, keeping its extension.
        let longest = String(repeating: "é", count: 125) + "x.txt"
        #expect(longest.utf8.count == RelativePath.maxNameBytes && NameCipher.maxNameBytes == RelativePath.maxNameBytes)
        let t = try names.seal(name: longest)
        #expect(try RelativePath(validating: t + " (restored 99)").name.utf8.count <= RelativePath.maxStoredNameBytes)
        let restored = try names.open(name: t + " (restored 99)")
        #expect(restored.utf8.count <= RelativePath.maxNameBytes && restored.hasSuffix("é (restored 99).txt"), "\(restored)")
        #expect(throws: CoreError.self) { try names.seal(name: longest + "x") }
        // No token is 236 to 255 characters long: the server tells a sealed name it must not cut
        // on a restore from a plain one by its length alone (`restoredName`).
        for n in 1...RelativePath.maxNameBytes {
            let t = try names.seal(name: String(repeating: "n", count: n)).utf8.count
            #expect(t <= 235 || t > RelativePath.maxNameBytes, "a name of \(n) bytes seals to \(t) characters")
        }
        // The server's rename on a restore (`notes (restored).txt`) comes through on the real name.
        let notesTxt = try names.seal(name: "notes.txt"), folder = try names.seal(name: "Folder")
        #expect(try names.open(name: notesTxt + " (restored)") == "notes (restored).txt")
        #expect(try names.open(name: notesTxt + " (restored 3)") == "notes (restored 3).txt")
        #expect(try names.open(name: folder + " (restored 2)") == "Folder (restored 2)")
        let path = try RelativePath(validating: "Documents/Folder/notes.txt")
        #expect(try names.open(path: try names.seal(path: path)) == path)
        // What a dishonest server could send instead: tampered, never a name.
        let otherNames = AccountKey.generate().keys(for: notes).names
        for bad in ["notes.txt", notesTxt + "x", String(notesTxt.dropLast()), notesTxt + " (restored 1)", notesTxt + " (restored x)",
                    try otherNames.seal(name: "notes.txt"), try AccountKey.generate().keys(for: other).names.seal(name: "a"), "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"] {
            #expect(throws: CoreError.self, "\(bad)") { try names.open(name: bad) }
        }
        // A sealed name that opens to something that is not a name (a slash, nothing but NUL).
        #expect(throws: CoreError.self) { try names.open(path: try RelativePath(validating: "Documents/" + (try names.seal(name: "a/b").description))) }
    }

    @Test func aRecoveryKeyIsReadAsTypedAndOpensOnlyItsAccountsKey() throws {
        let key = AccountKey.generate()
        let r = RecoveryKey.generate()
        #expect(r.grouped.count == 35 && r.grouped.split(separator: "-").count == 6)
        let sealed = r.seal(key, user: "alice")
        let typed = r.grouped.lowercased().replacingOccurrences(of: "-", with: " ").replacingOccurrences(of: "0", with: "o")
        #expect(try RecoveryKey(typed: typed) == r)
        #expect(try RecoveryKey(typed: typed).open(sealed, user: "alice") == key)
        #expect(throws: CoreError(.badCredentials, "that is not this account's recovery key")) { try RecoveryKey.generate().open(sealed, user: "alice") }
        #expect(throws: CoreError(.badCredentials, "that is not this account's recovery key")) { try r.open(sealed, user: "bob") }
        #expect(throws: CoreError.self) { try r.open(String(sealed.dropFirst(4)), user: "alice") }
        #expect(throws: CoreError.self) { try r.open("not base64 !", user: "alice") }
        for bad in ["", "ABC", r.symbols + "A", String(r.symbols.dropLast()) + "U", String(r.symbols.dropLast()) + "!"] {
            #expect(throws: CoreError.self, "\(bad)") { try RecoveryKey(typed: bad) }
        }
    }

    @Test func settingsSealToTokensAndOpenOnlyWhereTheyWereWritten() throws {
        var rng = SeededRandom.forTest("e2e.settings")
        let c = SettingsCipher(keys: AccountKey.generate().keys(for: notes))
        let device = DeviceID(uuid: UUID())
        func value(_ depth: Int) -> KVValue {
            switch rng.next() % (depth > 3 ? 6 : 8) {
            case 0: return .string(String(decoding: rng.bytes(Int(rng.next() % 40)).map { 0x61 + $0 % 26 }, as: UTF8.self) + "é")
            case 1: return .int(Int64(bitPattern: rng.next()))
            case 2: return .double(Double(Int64(bitPattern: rng.next() >> 12)) / 7)
            case 3: return .bool(rng.next() % 2 == 0)
            case 4: return .date(Date(timeIntervalSince1970: Double(rng.next() % 4_000_000_000) / 1000))
            case 5: return .data(Data(rng.bytes(Int(rng.next() % 300))))
            case 6: return .array((0..<Int(rng.next() % 5)).map { _ in value(depth + 1) })
            default: return .dictionary(Dictionary((0..<Int(rng.next() % 5)).map { ("k\($0)", value(depth + 1)) }, uniquingKeysWith: { a, _ in a }))
            }
        }
        for i in 0..<200 {
            let e = KVEntry(key: "setting.\(i % 37)", value: value(0), stamp: HLCTimestamp(wallMillis: Int64(i), counter: UInt32(i)), device: device)
            let sealed = c.seal(e)
            #expect(sealed.key == c.token(e.key) && sealed.key.count == 22 && sealed.stamp == e.stamp, "seed \(rng.seed)")
            #expect(try c.open(sealed) == e, "seed \(rng.seed)")
            // Moved to another key, restamped, or altered: tampered.
            let moved = KVEntry(key: c.token("other"), value: sealed.value, stamp: sealed.stamp, device: device)
            let restamped = KVEntry(key: sealed.key, value: sealed.value, stamp: HLCTimestamp(wallMillis: e.stamp.wallMillis + 1, counter: 0), device: device)
            guard case .data(var d)? = sealed.value else { Issue.record("not data"); continue }
            d[Int(rng.next() % UInt64(d.count))] ^= 1
            let altered = KVEntry(key: sealed.key, value: .data(d), stamp: sealed.stamp, device: device)
            for bad in [moved, restamped, altered, KVEntry(key: sealed.key, value: .string("plain"), stamp: sealed.stamp, device: device)] {
                #expect(throws: CoreError.self, "seed \(rng.seed)") { try c.open(bad) }
            }
        }
        // A delete is a delete of the token.
        let delete = KVEntry(key: "gone", value: nil, stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: device)
        #expect(c.seal(delete).key == c.token("gone") && c.seal(delete).value == nil)
    }

    /// The sealed value's binary form read from hostile bytes: an error or a value, never a
    /// crash or a hang (seeded; bytes mutated from real encodings and purely random).
    @Test func theSealedValueFormSurvivesHostileBytes() {
        var rng = SeededRandom.forTest("e2e.kvcoding.fuzz")
        var sample: [UInt8] = []
        KVValueCoding.append(.dictionary(["a": .array([.int(1), .string("x"), .data(Data([1, 2]))]), "b": .double(2)]), to: &sample)
        var at = 0
        #expect((try? KVValueCoding.read(sample, at: &at, depth: 0)) != nil && at == sample.count)
        for i in 0..<20_000 {
            var b = i % 2 == 0 ? sample : rng.bytes(Int(rng.next() % 64))
            if !b.isEmpty { for _ in 0..<(1 + Int(rng.next() % 4)) { b[Int(rng.next() % UInt64(b.count))] = UInt8(truncatingIfNeeded: rng.next()) } }
            var at = 0
            _ = try? KVValueCoding.read(b, at: &at, depth: 0)
            #expect(at <= b.count + 1, "seed \(rng.seed)")
        }
        // Deep nesting stops at the limit.
        let deep: [UInt8] = (0..<200).flatMap { _ in [UInt8(8), UInt8(1)] }
        var d = 0
        #expect((try? KVValueCoding.read(deep, at: &d, depth: 0)) == nil)
    }

    @Test func aVersionRecordOpensOnlyForItsVersionItsItemAndKey() throws {
        var rng = SeededRandom.forTest("e2e.records")
        let keys = AccountKey.generate().keys(for: notes)
        let c = RecordCipher(keys: keys)
        for _ in 0..<100 {
            let f = RecordCipher.Fields(modified: Date(timeIntervalSince1970: Double(rng.next() % 4_000_000_000_000) / 1000),
                                        permissions: rng.next() % 3 == 0 ? nil : Int(rng.next() % 0o1000),
                                        hash: ContentHash.of(rng.bytes(8)), size: Int(rng.next() % (1 << 40)),
                                        generation: rng.next() % 4 == 0 ? nil : UInt32(truncatingIfNeeded: rng.next()) | 1)
            let v = VersionID(uuid: UUID()), item = ItemID(uuid: UUID())
            let s = c.seal(f, version: v, item: item)
            #expect(try c.open(s, version: v, item: item) == f, "seed \(rng.seed)")
            #expect(s != c.seal(f, version: v, item: item), "a fresh nonce each time")
            #expect(throws: CoreError.self) { try c.open(s, version: VersionID(uuid: UUID()), item: item) }
            #expect(throws: CoreError.self, "a record shown under another item") { try c.open(s, version: v, item: ItemID(uuid: UUID())) }
            #expect(throws: CoreError.self) { try RecordCipher(keys: AccountKey.generate().keys(for: notes)).open(s, version: v, item: item) }
            var d = Array(Data(base64Encoded: s)!)
            d[Int(rng.next() % UInt64(d.count))] ^= 0x10
            #expect(throws: CoreError.self) { try c.open(Data(d).base64EncodedString(), version: v, item: item) }
        }
    }

    /// A record sealed before records were bound to their item (bound to its version alone)
    /// still opens, under any item; one sealed since opens under its own item only.
    @Test func aRecordSealedBeforeItemsWereBoundStillOpens() throws {
        var rng = SeededRandom.forTest("e2e.records.legacy")
        let keys = AccountKey.generate().keys(for: notes)
        let c = RecordCipher(keys: keys)
        let f = RecordCipher.Fields(modified: Date(timeIntervalSince1970: 1_600_000_000), permissions: 0o600, hash: ContentHash.of(rng.bytes(8)), size: 8)
        let v = VersionID(uuid: UUID())
        let old = c.seal(f, associated: c.legacyAssociated(v))
        for _ in 0..<3 { #expect(try c.open(old, version: v, item: ItemID(uuid: UUID())) == f, "seed \(rng.seed)") }
        #expect(throws: CoreError.self) { try c.open(old, version: VersionID(uuid: UUID()), item: ItemID(uuid: UUID())) }
        let item = ItemID(uuid: UUID()), new = c.seal(f, version: v, item: item)
        #expect(try c.open(new, version: v, item: item) == f)
        #expect(throws: CoreError.self) { try c.open(new, version: v, item: ItemID(uuid: UUID())) }
    }

    @Test func base64URLMatchesFoundationsAndRefusesEverythingElse() {
        var rng = SeededRandom.forTest("e2e.base64url")
        for n in 0..<300 {
            let bytes = rng.bytes(n % 200)
            let mine = Base64URL.encode(bytes)
            let foundation = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(mine == foundation && Base64URL.decode(mine) == bytes, "seed \(rng.seed)")
        }
        for bad in ["A", "AB=", "AB+/", "ab cd", "é", "AB", "ABC"] where Base64URL.decode(bad).map({ Base64URL.encode($0) }) != bad {
            #expect(Base64URL.decode(bad) == nil, "\(bad)")
        }
    }

    @Test func aGrantOpensOnlyOnTheDeviceWhoseRequestItAnswers() throws {
        let key = AccountKeyring(AccountKey.generate()).rolled()  // a ring of two generations
        let device = DeviceID(uuid: UUID())
        let request = DeviceEnrolment.Request(deviceName: "laptop ✓")
        let (publicKey, name) = try DeviceEnrolment.read(request: request.text)
        #expect(name == "laptop ✓" && DeviceEnrolment.code(of: publicKey.rawRepresentation) == request.code)
        #expect(request.code.count == 11 && DeviceEnrolment.normalized(code: request.code.lowercased().replacingOccurrences(of: "-", with: " ")) == request.code)
        #expect(DeviceEnrolment.normalized(code: "12345") == nil && DeviceEnrolment.normalized(code: "ABCDE-FGHIU") == nil)
        let grant = try DeviceEnrolment.grant(key, to: request.text, user: "alice", device: device)
        #expect(try DeviceEnrolment.open(grant: grant, with: request.privateKey, user: "alice", device: device) == key)
        // Another device's key, another device ID or account, a damaged grant: tampered.
        let other = DeviceEnrolment.Request(deviceName: "phone")
        #expect(other.code != request.code)
        #expect(throws: CoreError.self) { try DeviceEnrolment.open(grant: grant, with: other.privateKey, user: "alice", device: device) }
        #expect(throws: CoreError.self) { try DeviceEnrolment.open(grant: grant, with: request.privateKey, user: "alice", device: DeviceID(uuid: UUID())) }
        #expect(throws: CoreError.self) { try DeviceEnrolment.open(grant: grant, with: request.privateKey, user: "bob", device: device) }
        #expect(throws: CoreError.self) { try DeviceEnrolment.open(grant: String(grant.dropLast(6)) + "AAAAAA", with: request.privateKey, user: "alice", device: device) }
        for bad in ["", "ubiq-enrol-v1", "ubiq-enrol-v1 AAAA bmFtZQ==", "ubiq-enrol-v0 " + request.text.split(separator: " ").dropFirst().joined(separator: " ")] {
            #expect(throws: CoreError.self, "\(bad)") { try DeviceEnrolment.read(request: bad) }
        }
    }

    @Test func chunksSealedToNameThemAreKeptForTheirUploadWithinABound() {
        var rng = SeededRandom.forTest("e2e.kept")
        let c = AccountKey.generate().keys(for: notes).chunks
        let naming = ChunkNaming(cipher: c, keepsSealed: true)
        let chunks = (0..<700).map { _ in rng.bytes(128 << 10) }  // 87.5 MiB: more than the bound
        let names = chunks.map { naming.name($0) }
        // Every chunk's sealed bytes are right, kept or not; the newest are still kept, the oldest not.
        for (bytes, name) in zip(chunks, names) { #expect(bytes.withUnsafeBytes { Array(c.sealed($0, named: name)) } == c.seal(bytes)) }
        #expect(c.kept.take(names[699]) == nil, "taken once, then gone")
        _ = naming.name(chunks[0])
        #expect(c.kept.take(names[0]).map { Array($0) } == c.seal(chunks[0]))
        // A check (no keeping) keeps nothing.
        _ = ChunkNaming(cipher: c).name(chunks[1])
        #expect(c.kept.take(names[1]) == nil)
    }
}
