import Foundation
import Testing
import UbiqCore
import UbiqEngine
@testable import UbiqTUI
import UbiqTesting

/// tui.md §3.3's remaining Conflicts keys — `i`/`x` details, `o` open a version outside, `e`
/// edit the merged result — and `+` for the Files panes (§2).
@Suite("Version details, open and maximized panes")
struct VersionDetailsTests {
    func press(_ s: inout AppState, _ keys: [Key]) -> [Effect] { keys.flatMap { s.handle($0) } }
    static let plan = try! RelativePath(validating: "Documents/plan.txt")
    let ctx = RenderContext(theme: Fixtures.theme, now: Fixtures.t0)

    static func record(_ n: Int, _ device: String, base: Int? = nil, uploaded: Bool = true) -> VersionRecord {
        let id = { (k: Int) in VersionID(uuid: UUID(uuidString: String(format: "00000000-0000-4000-9000-%012d", k))!) }
        var r = VersionRecord(id: id(n), state: .current, size: 1000 + n, hash: ContentHash.of(Array("v\(n)".utf8)),
                              modified: Fixtures.t0.addingTimeInterval(Double(n) * 61), committed: Fixtures.t0.addingTimeInterval(Double(n) * 62),
                              device: DeviceID(uuid: UUID()), deviceName: device, uploaded: uploaded)
        r.base = base.map(id)
        return r
    }

    /// The Versions view of plan.txt: current (laptop), a conflict (phone, still uploading) and
    /// the history version both were based on.
    func versions() -> AppState {
        var s = Fixtures.state(view: .conflicts)
        var v = VersionsState(path: Self.plan)
        v.rows = [VersionRow(kind: .current, record: Self.record(2, "laptop", base: 1)),
                  VersionRow(kind: .conflict, record: Self.record(3, "phone", base: 1, uploaded: false)),
                  VersionRow(kind: .history, record: Self.record(1, "laptop"))]
        v.loading = false
        v.cursor.index = 1
        v.preview = ["milk", "eggs"]
        v.previewFor = v.rows[1].record.id
        s.versions = v
        return s
    }

    @Test func detailsSayWhoWhenHowBigWhatHashAndWhatAVersionWasBasedOn() {
        var s = versions()
        #expect(press(&s, [.char("i")]).isEmpty && s.versions?.details == true)
        let screen = Renderer.render(s, width: 100, height: 30, context: ctx).lines.joined(separator: "\n")
        let conflict = Self.record(3, "phone", base: 1, uploaded: false)
        #expect(screen.contains("Details: conflict · phone"), "the title names the version")
        #expect(screen.contains(String(conflict.hash.hex.prefix(40))), "its hash")
        #expect(screen.contains("1003 bytes") && screen.contains("still being uploaded by phone"), "its size and that its content is not complete")
        #expect(screen.contains("based on") && screen.contains("history · laptop"), "the version both sides were edited from")
        #expect(!screen.contains("eggs"), "the details take the content's place")
        // x is the same key; d (diff) leaves the details.
        _ = press(&s, [.char("x")])
        #expect(s.versions?.details == false)
        _ = press(&s, [.char("x"), .char("d")])
        #expect(s.versions?.details == false && s.versions?.showDiff == true)
        // The first version was based on nothing.
        _ = press(&s, [.char("G"), .char("i")])
        #expect(Renderer.render(s, width: 100, height: 30, context: ctx).lines.joined().contains("nothing: the first version"))
    }

    @Test func oOpensTheSelectedVersionAndEMergesLikeM() {
        var s = versions()
        let opened = press(&s, [.char("o")])
        guard case .openVersion(let path, let record) = opened.first, opened.count == 1 else { Issue.record("o: \(opened)"); return }
        #expect(path == Self.plan && record.id == Self.record(3, "phone").id && record.deviceName == "phone", "the selected version")
        #expect(press(&s, [.char("e")]) == [.merge(Self.plan, conflict: Self.record(3, "phone", base: 1, uploaded: false).id)])
        #expect(press(&s, [.char("m")]) == press(&s, [.char("e")]))
        // A file name for the opened copy: the extension kept, the device and time in it.
        let name = versionFileName(Self.plan, device: "phone", modified: Fixtures.t0)
        #expect(name.hasPrefix("plan (version from phone ") && name.hasSuffix(").txt"), "\(name)")
    }

    @Test func inTheConflictsListIXShowTheDetailsAndEMMerge() {
        var s = Fixtures.state(view: .conflicts)
        let here = s.files.conflicted.first!.path
        #expect(press(&s, [.char("e")]) == [.merge(here, conflict: nil)])
        #expect(press(&s, [.char("m")]) == [.merge(here, conflict: nil)])
        #expect(press(&s, [.char("i")]) == [.loadVersions(here)] && s.versions?.details == true && s.versions?.path == here)
        _ = press(&s, [.char("q"), .char("x")])
        #expect(s.versions?.details == true)
    }

    @Test func plusGivesTheOpenPaneTheWholeViewAndBack() {
        var s = Fixtures.state()
        _ = press(&s, [.char("+")])
        #expect(s.files.paneMaximized == false && s.flash?.text.contains("details (i) or transfers (t)") == true, "no pane: + says what it does")
        _ = press(&s, [.char("i"), .char("+")])
        #expect(s.files.paneMaximized)
        var screen = Renderer.render(s, width: 80, height: 24, context: ctx).lines.joined(separator: "\n")
        #expect(screen.contains("Details") && !screen.contains("Files ·"), "the details on the whole view, the list hidden")
        _ = press(&s, [.char("+")])
        screen = Renderer.render(s, width: 80, height: 24, context: ctx).lines.joined(separator: "\n")
        #expect(screen.contains("Details") && screen.contains("Files ·"), "back: the list and the pane")
        // The transfers pane too; closing a pane ends the maximized view.
        _ = press(&s, [.char("t"), .char("+")])
        screen = Renderer.render(s, width: 80, height: 24, context: ctx).lines.joined(separator: "\n")
        #expect(screen.contains("Transfers") && !screen.contains("Files ·"))
        _ = press(&s, [.char("t")])
        #expect(!s.files.paneMaximized && Renderer.render(s, width: 80, height: 24, context: ctx).lines.joined().contains("Files ·"))
    }
}

extension VersionDetailsTests {
    /// `Tab` gives the keys to the open pane (tui.md §3.1): the transfers pane scrolls with
    /// j/k/PgDn/g/G while the list keeps its place; `Tab` or `Esc` gives them back.
    @Test func tabFocusesTheTransfersPaneWhichScrolls() {
        var s = Fixtures.state()
        let waiting = (0..<30).map { n in Fixtures.item(100 + n, String(format: "Documents/w%02d.txt", n)) { $0.uploaded = false } }
        _ = s.apply(.update(QueryDiff(added: waiting)))
        let listAt = s.files.cursor.index
        _ = press(&s, [.tab])
        #expect(!s.files.paneFocused, "no pane open: Tab does nothing here")
        _ = press(&s, [.char("t"), .tab, .char("j"), .char("j"), .char("j")])
        #expect(s.files.paneFocused && s.files.paneTop == 3 && s.files.cursor.index == listAt, "the pane scrolled, the list did not move")
        let lines = Renderer.render(s, width: 100, height: 30, context: ctx).lines
        let pane = lines.drop { !$0.contains("Transfers") }.joined(separator: "\n")
        let (active, queued) = TransfersPane.rows(s.files)
        let all = (active + queued).map(\.path.string)
        #expect(pane.contains("from 4") && pane.contains(all[3]) && !pane.contains(all[2] + " "), "the fourth row first: \(pane)")
        _ = press(&s, [.char("G")])
        #expect(s.files.paneTop == TransfersPane.rowCount(s.files) - 1)
        _ = press(&s, [.escape, .char("j")])
        #expect(!s.files.paneFocused && s.files.cursor.index == listAt + 1, "Esc gives the keys back to the list")
        _ = press(&s, [.char("i")])
        #expect(s.files.details && !s.files.transfers && s.files.paneTop == 0, "another pane starts unscrolled")
    }
}

extension VersionDetailsTests {
    /// `P` with marks in Files holds only their transfers (the first marked item decides: a
    /// paused one resumes them); without marks it pauses all syncing as before.
    @Test func pWithMarksHoldsOnlyTheirTransfers() {
        var s = Fixtures.state()
        _ = press(&s, [.char("g"), .char(" "), .char(" ")])
        let marked = s.files.markedItems.map(\.path)
        #expect(marked.count == 2)
        #expect(press(&s, [.char("P")]) == [.hold(marked, true)] && s.files.marked.isEmpty)
        var paused = s.files.items[s.files.rows[0].item.itemID]!
        paused.paused = true
        _ = s.apply(.update(QueryDiff(changed: [paused])))
        _ = press(&s, [.char("g"), .char(" ")])
        #expect(press(&s, [.char("P")]) == [.hold([paused.path], false)], "a paused first item resumes")
        #expect(press(&s, [.char("P")]) == [.pause(true)], "no marks: all syncing")
    }
}
