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
                   String(repeating: "n", count: 256), String(repeating: "a/", count: 2100) + "a"]
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
}
