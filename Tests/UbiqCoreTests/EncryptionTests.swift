import Foundation
import Testing
import UbiqCore
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
            let length = 1 + Int(rng.next() % 60)
            for _ in 0..<length { name.unicodeScalars.append(alphabet[Int(rng.next() % UInt64(alphabet.count))]) }
            name = name.precomposedStringWithCanonicalMapping
            guard name.utf8.count <= NameCipher.maxNameBytes, (try? RelativePath(validating: name)) != nil else { continue }
            let token = try names.seal(name: name)
            #expect(token.utf8.count <= 235 && (try? RelativePath(validating: token)) != nil, "seed \(rng.seed)")
            #expect(try names.open(name: token) == name, "seed \(rng.seed)")
            #expect(try names.seal(name: name) == token, "deterministic; seed \(rng.seed)")
            if let earlier = seenTokens[token] { #expect(earlier == name, "two names, one token; seed \(rng.seed)") }
            seenTokens[token] = name
        }
        // The longest name fits with the server's restore suffix; a longer one is refused.
        let longest = String(repeating: "é", count: NameCipher.maxNameBytes / 2)
        let t = try names.seal(name: longest)
        #expect(try RelativePath(validating: t + " (restored 99)").name.utf8.count <= RelativePath.maxNameBytes)
        #expect(throws: CoreError.self) { try names.seal(name: longest + "x") }
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
}
