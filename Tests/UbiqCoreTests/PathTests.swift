import Foundation
import Testing
import UbiqCore
import UbiqTesting

@Suite("Relative paths")
struct PathTests {
    @Test func acceptsGoodPaths() throws {
        for p in ["a", "Documents/notes.txt", "Documents/报告-2024年.pdf", "x/y/z 🎉.md", ".hidden", "a..b", "...", "folder.nosync/x"] {
            #expect(try RelativePath(validating: p).string == p)
        }
        let nfd = "Cafe\u{301}.txt"
        #expect(try RelativePath(validating: nfd).string == "Caf\u{E9}.txt")
    }

    @Test func rejectsHostilePaths() {
        let bad = ["", "/etc/passwd", "a//b", "a/", "/", ".", "..", "../x", "a/../b", "a/./b", "a\u{0}b", "a\nb", "a\tb", "x\u{7F}",
                   String(repeating: "n", count: 401), String(repeating: "a/", count: 2100) + "a"]
        for p in bad {
            #expect(throws: CoreError.self, "accepted \(p.debugDescription.prefix(40))") { try RelativePath(validating: p) }
        }
        #expect(throws: CoreError.self) { try RelativePath(validatingBytes: [0x61, 0xFF, 0x62]) }
    }

    @Test func generatedCorpus() {
        var rng = SeededRandom.forTest("paths")
        let goodAlphabet = Array("abcXYZ019 -_.()[]éü日本🎉")
        for _ in 0..<3000 {
            let segs = (0..<Int.random(in: 1...6, using: &rng)).map { _ -> String in
                var s = String((0..<Int.random(in: 1...20, using: &rng)).map { _ in goodAlphabet.randomElement(using: &rng)! })
                if s == "." || s == ".." { s += "x" }
                return s
            }
            let path = segs.joined(separator: "/")
            let ok = (try? RelativePath(validating: path)) != nil
            #expect(ok, "rejected good path \(path.debugDescription), seed \(rng.seed)")
            // Hostile mutations of a good path are rejected.
            let hostile: [String] = ["/" + path, path + "/", path + "/..", "../" + path, path.replacingOccurrences(of: "/", with: "//"),
                                     path + "\u{1}", path + "/\u{0}x"]
            for h in hostile where h != path {
                #expect((try? RelativePath(validating: h)) == nil, "accepted \(h.debugDescription), seed \(rng.seed)")
            }
        }
    }

    @Test func helpers() throws {
        let p = try RelativePath(validating: "Documents/a.nosync/b.txt")
        #expect(p.isExcluded && p.isInDocuments)
        #expect(p.name == "b.txt" && p.parent?.string == "Documents/a.nosync")
        let q = try RelativePath(validating: "Documents/x/y")
        #expect(q.rebased(from: try RelativePath(validating: "Documents/x"), to: try RelativePath(validating: "Other")).string == "Other/y")
        #expect(!(try RelativePath(validating: "Documentsx/y")).isInDocuments)
        #expect(!(try RelativePath(validating: "a/b.nosyncx")).isExcluded)
    }

    /// The one-pass byte validation and `isExcluded` agree with a plain segment-by-segment
    /// reading of the rules on random strings made of the characters that matter.
    @Test func byteValidationAgreesWithTheRules() {
        var rng = SeededRandom.forTest("path-rules")
        let alphabet: [String] = ["a", "b", "/", "/", ".", ".", "..", ".nosync", "é", "日", "\u{1}", "\u{7F}", "\u{85}", "\u{9F}", "\u{A0}",
                                  "e\u{301}", "\u{301}", " ", String(repeating: "n", count: 250)]
        func reference(_ raw: String) -> String? {
            let s = raw.precomposedStringWithCanonicalMapping
            // Over bytes, as paths are cut: `/` followed by a combining mark is one `Character`.
            guard !raw.isEmpty, s.utf8.count <= RelativePath.maxPathBytes, s.utf8.first != 0x2F else { return nil }
            guard !s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value) }) else { return nil }
            for seg in s.utf8.split(separator: 0x2F, omittingEmptySubsequences: false) {
                if seg.isEmpty || seg.elementsEqual(".".utf8) || seg.elementsEqual("..".utf8) || seg.count > RelativePath.maxStoredNameBytes { return nil }
            }
            return s
        }
        var accepted = 0
        for _ in 0..<20_000 {
            let raw = (0..<Int.random(in: 1...8, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }.joined()
            let got = try? RelativePath(validating: raw)
            #expect(got?.string == reference(raw), "\(raw.debugDescription), seed \(rng.seed)")
            if let got {
                accepted += 1
                #expect(got.isExcluded == got.components.contains { $0.hasSuffix(".nosync") }, "\(raw.debugDescription), seed \(rng.seed)")
                // Segments are cut at `/` bytes, as the validator cuts them — also where a
                // combining mark follows a `/` (one `Character` with it).
                let segments = got.string.utf8.split(separator: 0x2F).map { String(decoding: $0, as: UTF8.self) }
                #expect(got.components == segments, "\(raw.debugDescription), seed \(rng.seed)")
                #expect(got.name == segments.last, "\(raw.debugDescription), seed \(rng.seed)")
                #expect(got.parent?.string == (segments.count > 1 ? segments.dropLast().joined(separator: "/") : nil), "\(raw.debugDescription), seed \(rng.seed)")
                if let parent = got.parent {
                    #expect(got.isSelfOrDescendant(of: parent) && !parent.isSelfOrDescendant(of: got), "\(raw.debugDescription), seed \(rng.seed)")
                    let moved = try! RelativePath(validating: "Moved")
                    #expect(got.rebased(from: parent, to: moved).string == "Moved/" + got.name, "\(raw.debugDescription), seed \(rng.seed)")
                }
            }
        }
        #expect(accepted > 1000, "the generator should make good paths too (seed \(rng.seed))")
    }
}
