import Foundation
import Testing
import UbiqCore
import UbiqTesting
@testable import UbiqTUI

/// #44 row 1: in the Versions view a long line stopped at the pane's border with no marker, no
/// wrap and no sideways scroll — in the demo's own conflict the end of "(desktop: moved to 9:00)"
/// was hidden, and "keep this version" was a blind choice on prose. Lines now wrap by default
/// (`w` toggles); not wrapped, `→` marks where a line goes on and `←`/`→` scroll; the diff
/// stresses where within a line two versions differ.
@Suite("Versions: whole lines")
struct VersionContentTests {
    /// Every character of every line lands on exactly one row, in order, within the width;
    /// not wrapped, scrolling sideways reaches every character and the markers tell the truth.
    @Test func layoutShowsEveryCharacterOnceAndSidewaysReachesTheEnd() {
        var rng = SeededRandom.forTest("tui.content-layout")
        let alphabet: [Character] = Array("abc xyz-0123") + ["日", "本", "é", "🎉", "\u{301}"]
        for _ in 0..<FuzzCases.count(2_000) {
            let lines = (0..<Int.random(in: 1...6, using: &rng)).map { _ in
                String((0..<Int.random(in: 0...120, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            }
            // A pane's text is at least 12 columns wide (the view needs 40); sideways steps are 8.
            let width = Int.random(in: 12...50, using: &rng)
            let wrapped = ContentLayout.rows(lines, from: 0, height: 10_000, width: width, wrap: true, column: 0)
            for (i, line) in lines.enumerated() {
                let widths = line.map { max(TextWidth.of($0), 1) }
                let pieces = wrapped.filter { $0.line == i }
                #expect(pieces.first?.start == 0 && pieces.first?.first == true, "\(line.debugDescription) at \(width)")
                // Consecutive rows to the end; a space where a row breaks may be left out.
                let chars = Array(line)
                let end = pieces.last?.end ?? 0
                #expect(end == widths.count || (end + 1 == widths.count && chars[end] == " "), "\(line.debugDescription) at \(width): the end is shown")
                for (a, b) in zip(pieces, pieces.dropFirst()) {
                    #expect((a.end == b.start || (a.end + 1 == b.start && chars[a.end] == " ")) && !b.first)
                }
                for p in pieces where p.end - p.start > 1 { #expect(widths[p.start..<p.end].reduce(0, +) <= width, "a row wider than the pane") }
                // Not wrapped: from column 0 in steps, every character is shown at some step.
                var seen = Set<Int>()
                var column = 0
                repeat {
                    let p = ContentLayout.rows([line], from: 0, height: 1, width: width, wrap: false, column: column)[0]
                    seen.formUnion(p.start..<p.end)
                    let used = widths[p.start..<p.end].reduce(0, +) + (p.cutLeft ? 1 : 0) + (p.cutRight ? 1 : 0)
                    #expect(used <= width, "markers and text fit: \(used) of \(width)")
                    #expect(p.cutRight == (p.end < widths.count) && p.cutLeft == (p.start > 0))
                    column += AppState.sideStep
                } while column < widths.reduce(0, +)
                #expect(seen == Set(0..<widths.count), "\(line.debugDescription) at \(width): sideways reaches every character")
            }
        }
    }

    @Test func changedPartsAreTheWordsThatDiffer() {
        let (old, new) = LineDiff.changedParts("meet at 10:00 (desktop)", "meet at 9:00 (desktop: moved)")
        #expect(old == [8..<10] && new == [8..<9, 21..<28], "\(old) \(new)")
        #expect(LineDiff.changedParts("same", "same") == ([], []))
        #expect(LineDiff.changedParts("ab", "abc") == ([0..<2], [0..<3]), "one word changed")
        // Past 600 words: the common start and end.
        let many = String(repeating: "w ", count: 700)
        #expect(LineDiff.changedParts(many + "x", many + "y") == ([1400..<1401], [1400..<1401]))
    }

    static let head = String(repeating: "The quarterly plan keeps every team on the same page; ", count: 3)
    static func long(_ word: String) -> String { head + "we meet on \(word) in the large room" + String(repeating: " and nobody is late", count: 5) + " END-\(word)" }

    /// The state of a conflict whose only line is ~300 characters long, differing in one word.
    static func state(width: Int) -> AppState {
        var s = Fixtures.state(view: .conflicts)
        let rec = { (n: Int, dev: String, state: VersionState) in
            VersionRecord(id: VersionID(uuid: UUID(uuidString: String(format: "00000000-0000-4000-9000-%012d", n))!), state: state, size: 300,
                          hash: ContentHash.of(Array("v\(n)".utf8)), modified: Fixtures.t0, committed: Fixtures.t0, device: DeviceID(uuid: UUID()),
                          deviceName: dev, uploaded: true)
        }
        var v = VersionsState(path: try! RelativePath(validating: "Documents/plan.txt"))
        v.rows = [VersionRow(kind: .current, record: rec(1, "laptop", .current)), VersionRow(kind: .conflict, record: rec(2, "desktop", .conflict))]
        v.loading = false
        v.cursor.index = 1
        v.currentText = ["short first line", long("Monday")]
        v.preview = ["short first line", long("Friday")]
        v.previewFor = v.rows[1].record.id
        s.versions = v
        return s
    }

    @Test(arguments: [(80, 24), (120, 40)]) func theEndOfALongLineOfEitherVersionIsReachable(_ size: (Int, Int)) {
        let (w, h) = size
        let ctx = RenderContext(theme: Fixtures.theme, now: Fixtures.t0)
        var s = Self.state(width: w)
        (s.screenWidth, s.screenHeight) = (w, h)
        // Wrapped (the default): both versions' ends are on screen.
        var screen = Renderer.render(s, width: w, height: h, context: ctx)
        let text = screen.lines.joined(separator: "\n")
        #expect(text.contains("END-Monday") && text.contains("END-Friday"), "\(text)")
        if w == 80 { Fixtures.golden("versions-wrapped-80x24", screen) }
        // The diff: both lines shown whole (scrolling down reaches the second's end on a small
        // screen), the changed word stressed on each.
        _ = s.handle(.char("d"))
        screen = Renderer.render(s, width: w, height: h, context: ctx)
        var diffText = screen.lines.joined(separator: "\n")
        #expect(diffText.contains("END-Monday"), "\(diffText)")
        var scrolled = s
        _ = scrolled.handle(.tab)
        for _ in 0..<2 {
            _ = scrolled.handle(.char("j"))
            diffText += Renderer.render(scrolled, width: w, height: h, context: ctx).lines.joined(separator: "\n")
        }
        #expect(diffText.contains("END-Friday"), "\(diffText)")
        for word in ["Monday", "Friday"] {
            let y = screen.lines.firstIndex { $0.contains("on \(word)") }!
            let x = screen.lines[y].distance(from: screen.lines[y].startIndex, to: screen.lines[y].range(of: "on \(word)")!.lowerBound) + 3
            #expect(screen[x, y].role == "diff.change", "\(word) stressed: \(screen.roles(line: y))")
            #expect(screen[x - 2, y].role != "diff.change", "the common start left plain")
        }
        if w == 120 { Fixtures.golden("versions-diff-wrapped-120x40", screen) }
        // Not wrapped: a marker where the line is cut, and → scrolls to its end.
        _ = s.handle(.tab)
        _ = s.handle(.char("w"))
        #expect(s.versions?.wrap == false)
        screen = Renderer.render(s, width: w, height: h, context: ctx)
        let cut = screen.lines.firstIndex { $0.contains("The quarterly plan") }!
        #expect(screen.lines[cut].contains("→"), "a cut line is marked: \(screen.lines[cut])")
        for _ in 0..<60 { _ = s.handle(.right) }
        screen = Renderer.render(s, width: w, height: h, context: ctx)
        let far = screen.lines.joined(separator: "\n")
        #expect(far.contains("END-Monday") && far.contains("END-Friday") && far.contains("←"), "\(far)")
        #expect(far.contains("col "), "the title says how far it scrolled")
        // ← scrolls back; wrapped again, h goes back to the list as before.
        for _ in 0..<60 { _ = s.handle(.left) }
        #expect(s.versions?.column == 0)
        _ = s.handle(.char("w"))
        _ = s.handle(.char("h"))
        #expect(s.versions == nil, "h leaves the versions when lines are wrapped")
    }

    @Test func asciiMarkersStayAscii() {
        var s = Self.state(width: 80)
        _ = s.handle(.tab)
        _ = s.handle(.char("w"))
        _ = s.handle(.right)
        let screen = Renderer.render(s, width: 80, height: 24, context: RenderContext(theme: Fixtures.theme, ascii: true, now: Fixtures.t0))
        let y = screen.lines.firstIndex { $0.contains("quarterly") }!
        #expect(screen.lines[y].contains("<") && screen.lines[y].contains(">"), "\(screen.lines[y])")
        #expect(screen.lines.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } })
    }
}
