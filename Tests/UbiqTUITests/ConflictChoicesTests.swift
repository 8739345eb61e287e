import Foundation
import Testing
import UbiqCore
@testable import UbiqTUI
import UbiqTesting

/// The Conflicts view's staged decisions (tui.md §3.3): staged with `<` `>` `b`, shown, taken
/// back with `z` or `-`, applied together with `A` after a summary.
@Suite("Conflict choices")
struct ConflictChoicesTests {
    func press(_ s: inout AppState, _ keys: [Key]) -> [Effect] { keys.flatMap { s.handle($0) } }
    static func p(_ s: String) -> RelativePath { try! RelativePath(validating: s) }

    /// The fixture folder with two more conflicted documents.
    func state() -> AppState {
        var s = Fixtures.state(view: .conflicts)
        let more = [Fixtures.item(20, "Documents/a.txt") { $0.conflict = true }, Fixtures.item(21, "Documents/z.txt") { $0.conflict = true }]
        _ = s.apply(.update(QueryDiff(added: more)))
        return s
    }

    @Test func stagedChoicesAreShownTakenBackAndAppliedAfterASummary() {
        var s = state()
        #expect(s.files.conflicted.map(\.path.string) == ["Documents/a.txt", "Documents/plan.txt", "Documents/z.txt"])
        // < on a.txt (the cursor moves on), > on plan.txt, b on z.txt.
        #expect(press(&s, [.char("<"), .char(">"), .char("b")]).isEmpty)
        #expect(s.choices.staged == [Self.p("Documents/a.txt"): .current, Self.p("Documents/plan.txt"): .conflict, Self.p("Documents/z.txt"): .both])
        let screen = Renderer.render(s, width: 100, height: 30, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0)).lines.joined(separator: "\n")
        #expect(screen.contains("3 staged, A applies") && screen.contains("< keep current") && screen.contains("> keep the conflict")
                && screen.contains("b keep both"), "\(screen)")
        // z takes back the last (z.txt); - skips the selected one (the cursor is on z.txt).
        _ = press(&s, [.char("z")])
        #expect(s.choices.staged[Self.p("Documents/z.txt")] == nil && s.choices.staged.count == 2)
        _ = press(&s, [.char("g"), .char("-")])
        #expect(s.choices.staged.keys.map(\.string).sorted() == ["Documents/plan.txt"])
        // A asks with a summary; n keeps everything staged, y applies it and forgets it.
        _ = press(&s, [.char("g"), .char(",")])
        _ = press(&s, [.char("A")])
        #expect(s.confirm?.message.hasPrefix("Keep current for a.txt, keep the conflict for plan.txt: 2 decisions, applied on every device?") == true,
                "\(s.confirm?.message ?? "-")")
        #expect(press(&s, [.char("n")]).isEmpty && s.choices.staged.count == 2)
        _ = press(&s, [.char("A")])
        #expect(press(&s, [.char("y")]) == [.decide(Self.p("Documents/a.txt"), .current), .decide(Self.p("Documents/plan.txt"), .conflict), .clearChoices])
    }

    /// `]` / `[` stage the newer / older version (decided by the versions' dates when applied);
    /// in Conflicts they no longer switch views (elsewhere they still do).
    @Test func newerAndOlderAreStagedInsteadOfSwitchingViews() {
        var s = state()
        #expect(press(&s, [.char("]"), .char("[")]).isEmpty && s.view == .conflicts)
        #expect(s.choices.staged == [Self.p("Documents/a.txt"): .newer, Self.p("Documents/plan.txt"): .older])
        let screen = Renderer.render(s, width: 100, height: 30, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0)).lines.joined(separator: "\n")
        #expect(screen.contains("] keep the newer") && screen.contains("[ keep the older"), "\(screen)")
        _ = press(&s, [.char("A")])
        #expect(press(&s, [.char("y")]) == [.decide(Self.p("Documents/a.txt"), .newer), .decide(Self.p("Documents/plan.txt"), .older), .clearChoices])
        _ = press(&s, [.char("1"), .char("]")])
        #expect(s.view == .conflicts, "outside Conflicts ] still goes to the next view")
    }

    /// Pickers where the choices are few: a new key's type and a bool's value cycle with ↑/↓ (Tab).
    @Test func aNewKeysTypeAndABoolArePicked() {
        var s = Fixtures.state(view: .settings)
        _ = press(&s, [.char("a")] + Key.typing("volume") + [.enter])
        #expect(s.prompt?.text == "string" && s.prompt?.label.contains("↑↓ picks") == true)
        _ = press(&s, [.down, .down])
        #expect(s.prompt?.text == "double")
        _ = press(&s, [.up, .backTab, .backTab])
        #expect(s.prompt?.text == "json", "round the start")
        _ = press(&s, [.tab, .tab, .tab, .tab])
        #expect(s.prompt?.text == "bool")
        _ = press(&s, [.enter])
        #expect(s.prompt?.text == "true")
        #expect(press(&s, [.down, .enter]) == [.setValue(key: "volume", value: .bool(false))])
    }

    @Test func aChoiceAppliesToTheMarksAndNothingStagedSaysHowToStage() {
        var s = state()
        _ = press(&s, [.char("A")])
        #expect(s.confirm == nil && s.flash?.text.contains("nothing staged") == true)
        // Mark a.txt and z.txt (Space moves down), then b for both of them.
        _ = press(&s, [.char(" "), .char("j"), .char(" ")])
        #expect(s.choices.marked == [Self.p("Documents/a.txt"), Self.p("Documents/z.txt")])
        _ = press(&s, [.char("b")])
        #expect(s.choices.staged == [Self.p("Documents/a.txt"): .both, Self.p("Documents/z.txt"): .both] && s.choices.marked.isEmpty)
        // Esc clears marks; a document no longer in conflict loses its staged choice.
        _ = press(&s, [.char("g"), .char(" "), .escape])
        #expect(s.choices.marked.isEmpty)
        var resolved = Fixtures.item(20, "Documents/a.txt")
        resolved.conflict = false
        _ = s.apply(.update(QueryDiff(changed: [resolved])))
        #expect(s.choices.staged.keys.map(\.string) == ["Documents/z.txt"])
    }

    @Test func summaryAndUndoFollowTheOrderOfChoices() {
        var rng = SeededRandom.forTest("conflict.choices")
        let paths = (0..<6).map { Self.p("Documents/f\($0).txt") }
        for _ in 0..<200 {
            var c = ConflictChoices()
            var model: [(RelativePath, ConflictChoice)] = []  // staged, in order
            for _ in 0..<Int.random(in: 0...12, using: &rng) {
                let p = paths.randomElement(using: &rng)!, choice = ConflictChoice.allCases.randomElement(using: &rng)!
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: c.skip([p]); model.removeAll { $0.0 == p }
                case 1: let back = c.undo(); #expect(back == model.popLast()?.0, "seed \(rng.seed)")
                default: c.stage([p], choice); model.removeAll { $0.0 == p }; model.append((p, choice))
                }
            }
            #expect(c.staged == Dictionary(uniqueKeysWithValues: model.map { ($0.0, $0.1) }), "seed \(rng.seed)")
            let expected = ConflictChoice.allCases.compactMap { ch -> String? in
                let ps = model.filter { $0.1 == ch }.map(\.0).sorted()
                guard let first = ps.first else { return nil }
                return "\(ch.label) for \(ps.count == 1 ? first.name : "\(ps.count) documents")"
            }.joined(separator: ", ")
            #expect(c.summary == expected, "seed \(rng.seed)")
        }
    }
}
