import Testing
import UbiqCore
import UbiqTesting

/// The three-way merge (`ThreeWayMerge`): seeded random texts edited on two sides, checked
/// against what a merge promises.
@Suite("Three-way merge")
struct ThreeWayMergeTests {
    /// A base of distinct lines (some texts without a final newline).
    static func base(_ rng: inout SeededRandom, round: Int) -> [String] {
        let n = Int.random(in: 0...30, using: &rng)
        var lines = (0..<n).map { "line \(round).\($0)\n" }
        if !lines.isEmpty, Bool.random(using: &rng) { lines[lines.count - 1].removeLast() }
        return lines
    }

    /// Edits lines in `range` of `lines` (replace, delete, insert), tagged with `side`.
    static func edit(_ lines: [String], _ range: Range<Int>, side: String, _ rng: inout SeededRandom) -> [String] {
        var out = Array(lines[..<range.lowerBound])
        for i in range {
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: out.append("\(side) replaced \(i)\n")
            case 1: break  // deleted
            default: out.append(lines[i]); out.append("\(side) inserted after \(i)\n")
            }
        }
        return out + lines[range.upperBound...]
    }

    @Test func oneSidedChangesAreTakenAndBothEqualIsOne() throws {
        var rng = SeededRandom.forTest("merge.onesided")
        for round in 0..<300 {
            let b = Self.base(&rng, round: round)
            let lo = Int.random(in: 0...b.count, using: &rng), hi = Int.random(in: lo...b.count, using: &rng)
            let x = Self.edit(b, lo..<hi, side: "x", &rng)
            let seed = "seed \(rng.seed) round \(round)"
            for (o, t) in [(b, x), (x, b), (x, x)] {
                let r = try ThreeWayMerge.merge(base: b, ours: o, theirs: t, oursLabel: "ours", theirsLabel: "theirs")
                #expect(r.text == x.joined() && r.conflicts == 0, "\(seed)")
            }
        }
    }

    @Test func changesToLinesApartAreBothKept() throws {
        var rng = SeededRandom.forTest("merge.apart")
        for round in 0..<300 {
            let b = Self.base(&rng, round: round)
            guard b.count >= 3 else { continue }
            // Ours edits a range, theirs a range after it with at least one untouched line between.
            let split = Int.random(in: 1..<(b.count - 1), using: &rng)
            let oLo = Int.random(in: 0..<split, using: &rng), oHi = Int.random(in: oLo...split, using: &rng)
            let tLo = Int.random(in: (split + 1)...b.count, using: &rng), tHi = Int.random(in: tLo...b.count, using: &rng)
            // Both edits made on the base, then both applied for the expected result.
            let oursEdit = Self.edit(b, oLo..<oHi, side: "ours", &rng)
            var theirRng = rng
            let theirsEdit = Self.edit(b, tLo..<tHi, side: "theirs", &theirRng)
            rng = theirRng
            let expected = Array(oursEdit[..<(oursEdit.count - (b.count - oHi))]) + Array(b[oHi..<tLo]) + Array(theirsEdit[(tLo)...])
            let r = try ThreeWayMerge.merge(base: b, ours: oursEdit, theirs: theirsEdit, oursLabel: "ours", theirsLabel: "theirs")
            let seed = "seed \(rng.seed) round \(round)"
            #expect(r.conflicts == 0, "\(seed)")
            #expect(r.text == expected.joined(), "\(seed)")
            // The same with the sides swapped.
            let s = try ThreeWayMerge.merge(base: b, ours: theirsEdit, theirs: oursEdit, oursLabel: "ours", theirsLabel: "theirs")
            #expect(s.text == expected.joined(), "\(seed): swapped")
        }
    }

    @Test func theSameLinesChangedDifferentlyAreMarkedWithBothSides() throws {
        let base = ThreeWayMerge.lines(Array("a\nb\nc\nd\ne\n".utf8))!
        let ours = ThreeWayMerge.lines(Array("a\nb\nOURS\nd\ne\n".utf8))!
        let theirs = ThreeWayMerge.lines(Array("A\nb\nTHEIRS\nd\ne\n".utf8))!
        let r = try ThreeWayMerge.merge(base: base, ours: ours, theirs: theirs, oursLabel: "current (desk)", theirsLabel: "conflict (laptop)")
        #expect(r.conflicts == 1)
        #expect(r.text == "A\nb\n<<<<<<< current (desk)\nOURS\n||||||| base\nc\n=======\nTHEIRS\n>>>>>>> conflict (laptop)\nd\ne\n")
        #expect(ThreeWayMerge.hasMarkers(r.text))
        #expect(!ThreeWayMerge.hasMarkers("a\n<<<<<<<\n=======x\n"))
    }

    @Test func linesKeepEveryByteAndRefuseWhatIsNotText() {
        var rng = SeededRandom.forTest("merge.lines")
        let alphabet: [UInt8] = Array("ab \t\r\n".utf8)
        for _ in 0..<500 {
            let bytes = (0..<Int.random(in: 0...40, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            let l = ThreeWayMerge.lines(bytes)
            #expect(l.map { Array($0.joined().utf8) } == bytes, "seed \(rng.seed)")
            #expect(l?.dropLast().allSatisfy(ThreeWayMerge.endsLine) == true, "seed \(rng.seed)")
        }
        #expect(ThreeWayMerge.lines([0x61, 0, 0x62]) == nil)
        #expect(ThreeWayMerge.lines([0xff, 0xfe]) == nil)
        #expect(throws: ThreeWayMerge.Failure.notText) {
            try ThreeWayMerge.merge(base: [0xff], ours: [], theirs: [], oursLabel: "o", theirsLabel: "t")
        }
    }

    @Test func textsTooDifferentToMatchAreRefusedNotHeld() {
        // Two sides rewriting every line of a long base: the table would pass the bound.
        let n = 5_000
        let base = (0..<n).map { "b\($0)\n" }, ours = (0..<n).map { "o\($0)\n" }
        #expect(throws: ThreeWayMerge.Failure.tooDifferent) {
            try ThreeWayMerge.merge(base: base, ours: ours, theirs: base, oursLabel: "o", theirsLabel: "t")
        }
    }
}
