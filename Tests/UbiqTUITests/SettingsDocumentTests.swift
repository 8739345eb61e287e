import Foundation
import Testing
import UbiqCore
@testable import UbiqTUI
import UbiqTesting

/// `E` in Settings: the store as a TOML document and back (`SettingsDocument`). Seeded: every
/// value TOML can carry reads back equal, an untouched document writes nothing, an edit writes
/// exactly what changed, and damaged documents are refused with a line, never a crash.
@Suite("Settings as a TOML document")
struct SettingsDocumentTests {
    static func randomValue(_ rng: inout SeededRandom, depth: Int = 0) -> KVValue {
        let words = ["dark", "a \"quoted\" word", "tab\there", "line\nbreak", "back\\slash", "café ☕", "", "x = 1", "# not a comment"]
        switch Int.random(in: 0..<(depth < 2 ? 8 : 6), using: &rng) {
        case 0: return .string(words.randomElement(using: &rng)!)
        case 1: return .int(Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &rng))
        case 2: return .double([0.1, -2.5, 1e20, 3.0, -0.0, 123456.789].randomElement(using: &rng)!)
        case 3: return .bool(Bool.random(using: &rng))
        case 4: return .date(Date(timeIntervalSince1970: Double(Int64.random(in: 0...4_000_000_000_000, using: &rng)) / 1000))
        case 5: return .data(Data(rng.bytes(Int.random(in: 0...8, using: &rng))))
        case 6: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) })
        default:
            var d: [String: KVValue] = [:]
            for i in 0..<Int.random(in: 0...3, using: &rng) { d["k\(i)\(["", ".dot", " space"].randomElement(using: &rng)!)"] = randomValue(&rng, depth: depth + 1) }
            return .dictionary(d)
        }
    }

    static func containsData(_ v: KVValue) -> Bool {
        switch v {
        case .data: true
        case .array(let a): a.contains(where: containsData)
        case .dictionary(let d): d.values.contains(where: containsData)
        default: false
        }
    }

    @Test func everyValueTOMLCanCarryReadsBackAndEditsWriteExactlyTheirChanges() throws {
        var rng = SeededRandom.forTest("settings.document")
        let dev = DeviceID(uuid: UUID())
        for round in 0..<150 {
            var entries: [KVEntry] = []
            for i in 0..<Int.random(in: 0...12, using: &rng) {
                let key = ["fontSize", "theme", "a.b", "with space", "ключ", "q\"uote"][i % 6] + "\(i)"
                entries.append(KVEntry(key: key, value: Self.randomValue(&rng), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: dev))
            }
            let text = SettingsDocument.text(entries)
            let read = try SettingsDocument.parse(text)
            let carried = entries.filter { !Self.containsData($0.value!) }
            #expect(Set(read.keys) == Set(carried.map(\.key)), "seed \(rng.seed) round \(round): \(text)")
            for e in carried { #expect(read[e.key] == e.value, "seed \(rng.seed) round \(round): \(e.key) read back as \(String(describing: read[e.key])) from \(text)") }
            #expect(SettingsDocument.changes(before: read, after: try SettingsDocument.parse(text)).isEmpty, "an untouched document writes nothing")
            // An edit: one key changed, one removed, one added.
            guard carried.count >= 2 else { continue }
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let changed = carried[0].key, removed = carried[1].key
            lines.removeAll { $0.hasPrefix(SettingsDocument.quoted(removed) + " = ") }
            lines = lines.map { $0.hasPrefix(SettingsDocument.quoted(changed) + " = ") ? SettingsDocument.quoted(changed) + " = \"new\"" : $0 }
            lines.append("added = 42")
            let after = try SettingsDocument.parse(lines.joined(separator: "\n"))
            let writes = SettingsDocument.changes(before: read, after: after)
            var expected: [String: KVValue?] = [removed: KVValue?.none, "added": KVValue?.some(.int(42))]
            if carried[0].value != .string("new") { expected[changed] = .some(.string("new")) }
            #expect(writes == expected, "seed \(rng.seed) round \(round)")
        }
    }

    @Test func damagedDocumentsAreRefusedWithALineNeverACrash() {
        var rng = SeededRandom.forTest("settings.document.damaged")
        let base = SettingsDocument.text([KVEntry(key: "theme", value: .string("dark"), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: DeviceID(uuid: UUID())),
                                          KVEntry(key: "recent", value: .array([.string("a"), .int(2)]), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: DeviceID(uuid: UUID()))])
        let alphabet = Array("=[]{}\"'#.,\n\\ 0123456789-:TZe+".utf8)
        var refused = 0
        for _ in 0..<300 {
            var b = Array(base.utf8)
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                let at = Int.random(in: 0..<b.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: b[at] = alphabet.randomElement(using: &rng)!
                case 1: b.insert(alphabet.randomElement(using: &rng)!, at: at)
                default: if b.count > 1 { b.remove(at: at) }
                }
            }
            do { _ = try SettingsDocument.parse(String(decoding: b, as: UTF8.self)) } catch let p as SettingsDocument.Problem {
                refused += 1
                #expect(!p.message.isEmpty)
            } catch { refused += 1 }
        }
        #expect(refused > 50, "most damaged documents are refused (\(refused) of 300)")
        // Clear words for the usual mistakes.
        #expect(throws: SettingsDocument.Problem.self) { try SettingsDocument.parse("when = 2026-11-27T10:42:00") }
        #expect(throws: SettingsDocument.Problem.self) { try SettingsDocument.parse("theme = \"dark\"\ntheme = \"light\"") }
        for bad in ["d = 2026-13-45T99:99:99Z", "d = 2026-02-30T10:00:00Z", "d = 2026-11-27T10:42Z", "d = 10:42:00", "d = 2026-11-27", "d = 2026-11-27T10:42:00+25:99",
                    "d = 2026-11-27T10:42:00.Z"] {
            #expect(throws: (any Error).self, "\(bad)") { _ = try SettingsDocument.parse(bad) }
        }
        #expect((try? SettingsDocument.parse("d = 20261127")) == ["d": .int(20_261_127)])
        #expect((try? SettingsDocument.parse("d = 2026-11-27T11:42:00.5+01:00")) == ["d": .date(Date(timeIntervalSince1970: 1_795_776_120.5))], "the offset counts")
    }
}
