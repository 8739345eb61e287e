import Foundation
import Testing
import UbiqCore
import UbiqTesting

/// IDs print and sort without Foundation's formatter; both must agree with it exactly.
@Suite("Identifiers")
struct IdentifierTests {
    @Test func textFormAndOrderMatchFoundation() throws {
        var rng = SeededRandom.forTest("identifiers")
        var ids: [ItemID] = []
        for _ in 0..<5_000 {
            var bytes = [UInt8](repeating: 0, count: 16)
            for i in 0..<16 { bytes[i] = UInt8.random(in: 0...255, using: &rng) }
            // Shared prefixes make the order decided late in the bytes.
            if Bool.random(using: &rng), let prev = ids.last { withUnsafeBytes(of: prev.uuid.uuid) { for i in 0..<Int.random(in: 0...15, using: &rng) { bytes[i] = $0[i] } } }
            let uuid = bytes.withUnsafeBytes { UUID(uuid: $0.load(as: uuid_t.self)) }
            let id = ItemID(uuid: uuid)
            #expect(id.description == uuid.uuidString.lowercased())
            #expect(ItemID(string: id.description) == id)
            #expect(ItemID(string: uuid.uuidString) == id)  // upper case too
            ids.append(id)
        }
        for bad in ["", "not-a-uuid", String(repeating: "a", count: 36), "0123456-789a-bcde-f012-3456789abcdef", "g1234567-89ab-cdef-0123-456789abcdef"] {
            #expect(ItemID(string: bad) == nil, "'\(bad)'")
        }
        let fast = ids.sorted()
        let slow = ids.sorted { $0.description < $1.description }
        #expect(fast == slow, "seed \(rng.seed)")
    }

    /// IDs read from text (and from JSON) without Foundation's parser accept exactly what it
    /// accepts, with the same value: seeded strings near the canonical form.
    @Test func parsingAgreesWithFoundation() throws {
        var rng = SeededRandom.forTest("identifiers.parse")
        let alphabet = Array("0123456789abcdefABCDEF-g ")
        let decoder = JSONDecoder()
        for _ in 0..<20_000 {
            let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var chars = Array(bytes.withUnsafeBytes { UUID(uuid: $0.load(as: uuid_t.self)) }.uuidString)
            if Bool.random(using: &rng) { chars = chars.map { Bool.random(using: &rng) ? Character($0.lowercased()) : $0 } }
            for _ in 0..<Int.random(in: 0...2, using: &rng) {
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: chars[Int.random(in: 0..<chars.count, using: &rng)] = alphabet.randomElement(using: &rng)!
                case 1: chars.remove(at: Int.random(in: 0..<chars.count, using: &rng))
                default: chars.insert(alphabet.randomElement(using: &rng)!, at: Int.random(in: 0...chars.count, using: &rng))
                }
            }
            let text = String(chars)
            let expected = UUID(uuidString: text).map { ItemID(uuid: $0) }
            #expect(ItemID(string: text) == expected, "'\(text)', seed \(rng.seed)")
            let fromJSON = try? decoder.decode([ItemID].self, from: Data("[\"\(text)\"]".utf8)).first
            #expect(fromJSON == expected, "'\(text)', seed \(rng.seed)")
        }
    }

    @Test func asciiAndUnicodePathsNormalise() throws {
        #expect(try RelativePath(validating: "Documents/plain.txt").string == "Documents/plain.txt")
        // A decomposed é (e + U+0301) is stored precomposed; an ASCII path is kept as given.
        #expect(try RelativePath(validating: "Documents/caf\u{65}\u{301}.txt").string == "Documents/caf\u{e9}.txt")
        #expect(throws: CoreError.self) { try RelativePath(validating: "Documents/../x") }
    }

    @Test func appendingANameAgreesWithValidatingTheWholePath() throws {
        var rng = SeededRandom.forTest("paths.appending")
        let alphabet: [String] = ["a", "Z", "0", ".", " ", "-", "/", "\u{0}", "\u{7}", "\u{7F}", "é", "e\u{301}", "🎉", "报", "\u{85}"]
        let base = try RelativePath(validating: "Documents/sub")
        for _ in 0..<5_000 {
            let name = (0..<Int.random(in: 0...6, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }.joined()
                + (Bool.random(using: &rng) ? "" : String(repeating: "x", count: Int.random(in: 240...270, using: &rng)))
            let fast = try? base.appending(name)
            let full = try? RelativePath(validating: base.string + "/" + name)
            #expect(fast == full, "name '\(name.debugDescription)', seed \(rng.seed)")
            if let p = fast, let q = try? base.appending(alphabet.randomElement(using: &rng)! + "x") {
                #expect((p < q) == p.string.utf8.lexicographicallyPrecedes(q.string.utf8) && !(p < p), "seed \(rng.seed)")
            }
        }
    }

    /// Content hashes are exactly 64 hex digits, kept in lower case; anything else is refused.
    @Test func contentHashTextIsCheckedExactly() {
        var rng = SeededRandom.forTest("hash-text")
        let hexDigits = Array("0123456789abcdefABCDEF"), other = Array("gG xz-é日\u{0}/")
        for _ in 0..<5_000 {
            let n = [63, 64, 64, 64, 65, 0].randomElement(using: &rng)!
            var chars = (0..<n).map { _ in hexDigits.randomElement(using: &rng)! }
            if n > 0 && Int.random(in: 0..<3, using: &rng) == 0 { chars[Int.random(in: 0..<n, using: &rng)] = other.randomElement(using: &rng)! }
            let text = String(chars)
            let good = chars.count == 64 && chars.allSatisfy(\.isHexDigit)
            let h = try? ContentHash(validating: text)
            #expect((h != nil) == good, "\(text.debugDescription), seed \(rng.seed)")
            if let h { #expect(h.hex == text.lowercased(), "seed \(rng.seed)") }
        }
    }
}
