import Foundation
import Testing
import UbiqCore
import UbiqEngine
import UbiqProtocol
@testable import UbiqTUI

/// Golden screens rendered into the in-memory buffer: the status column (glyph + colour role),
/// progress bars, the conflict marker, wide characters, 80×24, ASCII glyphs and mono.
@Suite("Rendering (golden screens)")
struct RenderTests {
    init() { TimeFormat.use(TimeZone(identifier: "UTC")!) }

    let ctx = RenderContext(theme: Fixtures.theme, now: Fixtures.t0)

    @Test func filesAt80x24() {
        let screen = Renderer.render(Fixtures.state(), width: 80, height: 24, context: ctx)
        Fixtures.golden("files-80x24", screen)
        // Every line is exactly 80 columns, wide characters included.
        for (n, line) in screen.lines.enumerated() { #expect(TextWidth.of(line) == 80, "line \(n): \(line)") }
        // The glyph column carries the status role (meaning never rests on colour alone: each state has its own glyph).
        let row = screen.lines.firstIndex { $0.contains("downloading.mov") }!
        #expect(screen[2, row].text == "↓" && screen[2, row].role == "status.downloading")
        #expect(screen.lines[row].contains("52%"))
        let conflictRow = screen.lines.firstIndex { $0.contains("plan.txt") }!
        #expect(screen[3, conflictRow].text == "⚠" && screen[3, conflictRow].role == "status.conflict")
        // #24 defect 13: the cursor row's bar has no gap at the glyph cell.
        let cursorRow = screen.lines.firstIndex { $0.contains("Reports/") }!
        #expect((1..<79).allSatisfy { screen[$0, cursorRow].role == "ui.selection" }, "\((1..<79).map { screen[$0, cursorRow].role })")
        let errorRow = screen.lines.firstIndex { $0.contains("broken.bin") }!
        #expect(screen[2, errorRow].text == "✗" && screen.lines[errorRow].contains("storage full"))
    }

    /// #24 §2 transfers pane (`t`) at 120×40: what moves (with progress) and what waits,
    /// across the container, throughput and ETA in its title and in the status line.
    @Test func transfersPaneAt120x40() {
        var s = Fixtures.state()
        s.status.uploads = .init(queued: 1, running: 1, bytesDone: 140_000, bytesTotal: 3_234_000)
        s.status.downloads = .init(queued: 0, running: 1, bytesDone: 41_600_000, bytesTotal: 80_000_000)
        s.status.throughput = 2_000_000
        _ = s.handle(.char("t"))
        let screen = Renderer.render(s, width: 120, height: 40, context: ctx)
        Fixtures.golden("transfers-120x40", screen)
        let text = screen.lines.joined(separator: "\n")
        #expect(text.contains("Transfers") && text.contains("ETA 21 s"), "(41.5 MB left at 2 MB/s)")
        let active = screen.lines.firstIndex { $0.contains("Documents/downloading.mov") }!
        let waiting = screen.lines.firstIndex { $0.contains("Documents/waiting.txt") }!
        #expect(active < waiting && screen.lines[active].contains("52%") && screen.lines[waiting].contains("waiting to upload"))
        #expect(!screen.lines.contains { $0.contains("│ ⇡") && $0.contains("current.txt") }, "synced files are not transfers")
        #expect(screen.lines.last?.contains("ETA 21 s") == true || screen.lines[38].contains("ETA 21 s"), "the status line has the ETA too")
        // i and t share the place below the list: one closes the other.
        _ = s.handle(.char("i"))
        #expect(s.files.details && !s.files.transfers)
    }

    /// `/` in the help keeps the lines whose key or text has the words; Esc/q clears it.
    @Test func theHelpFindsWhatIsTyped() {
        var s = Fixtures.state()
        (s.screenWidth, s.screenHeight, s.pageRows) = (80, 24, Renderer.listRows(height: 24))
        _ = s.handle(.char("?"))
        _ = s.handle(.char("/"))
        for k in Key.typing("PAUSE") { _ = s.handle(k) }
        _ = s.handle(.enter)
        let screen = Renderer.render(s, width: 80, height: 24, context: ctx).lines.joined(separator: "\n")
        #expect(screen.contains("pause or resume syncing") && screen.contains("/PAUSE"), "\(screen)")
        #expect(!screen.contains("rename") && !screen.contains("quit now"), "only matching lines")
        _ = s.handle(.char("/"))
        for k in Key.typing("zzz-nothing") { _ = s.handle(k) }
        _ = s.handle(.enter)
        #expect(Renderer.render(s, width: 80, height: 24, context: ctx).lines.joined().contains("nothing in the help matches"))
        _ = s.handle(.escape)
        #expect(!s.help && s.helpFilter.isEmpty)
    }

    @Test func etaIsWordsForHumansAndNothingWithoutThroughput() {
        #expect(StatusInfo.eta(remaining: 0, throughput: 1e6) == nil && StatusInfo.eta(remaining: 10, throughput: 0) == nil)
        #expect(StatusInfo.eta(remaining: 1, throughput: 1e9) == "1 s")
        #expect(StatusInfo.eta(remaining: 59_000_000, throughput: 1e6) == "59 s")
        #expect(StatusInfo.eta(remaining: 61_000_000, throughput: 1e6) == "2 min")
        #expect(StatusInfo.eta(remaining: 3_600_000_000, throughput: 1e6) == "1 h")
        #expect(StatusInfo.eta(remaining: 3_700_000_000, throughput: 1e6) == "1 h 2 min")
        #expect(StatusInfo.eta(remaining: .max, throughput: 1) == "over 99 h")
        #expect(StatusInfo.eta(remaining: 5, throughput: .infinity) == nil)
    }

    /// The too-small message wraps instead of cutting off the size it needs.
    @Test func theTooSmallMessageShowsWhatItNeeds() {
        let screen = Renderer.render(Fixtures.state(), width: 20, height: 8, context: ctx)
        let text = screen.lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
        #expect(text == "terminal too small: 20×8, needs 40×10", "\(screen.lines)")
    }

    /// #24 defect 5: at 80×24 the footer lost `? help  q quit` and the header dropped the
    /// device and cut the port without an ellipsis. Help and quit are always shown, and the
    /// header gives up the server before the device, never cutting silently.
    @Test func theEssentialsFitAt80ColumnsAndBelow() {
        for (w, h) in [(80, 24), (60, 15), (100, 30)] {
            for view in ViewID.allCases {
                let screen = Renderer.render(Fixtures.state(view: view), width: w, height: h, context: ctx)
                let footer = screen.lines[h - 1], header = screen.lines[0]
                #expect(footer.contains("? help") && footer.contains("q quit"), "\(w)×\(h) \(view): \(footer)")
                #expect(header.contains("laptop"), "\(w)×\(h) \(view): the device is missing: \(header)")
                #expect(!header.contains("127.0.0.1") || header.contains("127.0.0.1:8737 · laptop"), "\(w)×\(h): cut silently: \(header)")
            }
        }
        let wide = Renderer.render(Fixtures.state(), width: 120, height: 30, context: ctx)
        #expect(wide.lines[0].contains("alice@127.0.0.1:8737 · laptop"), "\(wide.lines[0])")
    }

    /// #24 defect 6: the help could not scroll; its legend was cut at every width and at 60×15
    /// the global keys fell off. Now every line is wrapped to the box, and `j`/`G` scroll to
    /// the end at any size.
    @Test func theHelpScrollsToEveryLine() {
        for (w, h) in [(60, 15), (80, 24), (40, 10)] {
            var s = Fixtures.state()
            (s.screenWidth, s.screenHeight, s.pageRows) = (w, h, Renderer.listRows(height: h))
            _ = s.handle(.char("?"))
            var seen = ""
            for _ in 0..<200 {
                seen += Renderer.render(s, width: w, height: h, context: ctx).lines.joined(separator: "\n")
                _ = s.handle(.char("j"))
            }
            // (At 40 columns the texts wrap, so whole phrases are looked for from 60 up.)
            for meaning in w >= 60 ? Overlays.legend.map(\.meaning) + ["Files, Conflicts, Settings", "quit now"] : ["quit now"] {
                #expect(seen.contains(meaning), "\(w)×\(h): '\(meaning)' never shown")
            }
            // G goes to the end, g back to the top; nothing scrolls past the last line.
            _ = s.handle(.char("G"))
            let end = Renderer.render(s, width: w, height: h, context: ctx).lines.joined(separator: "\n")
            #expect(end.contains("quit now") && end.contains("j/k"), "\(w)×\(h):\n\(end)")
            let top = s.helpTop
            _ = s.handle(.char("j"))
            #expect(s.helpTop == top, "scrolled past the end")
            _ = s.handle(.char("g"))
            #expect(s.helpTop == 0 && s.help)
            _ = s.handle(.escape)
            #expect(!s.help)
        }
    }

    /// #24: the golden in ASCII mono at 80×24 — the characters, and per cell the attributes a
    /// terminal without colour draws (`r` reverse, `b` bold, `u` underline, `d` dim, `B` reverse
    /// and bold, `U` reverse and underline, `x` bold and underline, `*` other, `.` plain).
    @Test func filesInAsciiMonoAt80x24() throws {
        let mono = try ThemeLoader(searchPaths: []).load("mono")
        let c = RenderContext(theme: mono, ascii: true, now: Fixtures.t0)
        let screen = Renderer.render(Fixtures.state(), width: 80, height: 24, context: c)
        Fixtures.golden("files-ascii-mono-80x24", screen)
        func letter(_ a: Set<TextAttribute>) -> String {
            switch a {
            case []: "."
            case [.reverse]: "r"
            case [.bold]: "b"
            case [.underline]: "u"
            case [.dim]: "d"
            case [.reverse, .bold]: "B"
            case [.reverse, .underline]: "U"
            case [.bold, .underline]: "x"
            default: "*"
            }
        }
        let rows = screen.lines.indices.map { y in (0..<80).map { letter(mono.style(screen[$0, y].role).mono) }.joined() }
        Fixtures.golden("files-ascii-mono-80x24.attrs", text: rows.joined(separator: "\n") + "\n")
        #expect(screen.lines.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } })
        // Without colour the cursor row still stands out from every other row, and the active
        // tab from the header.
        let cursor = screen.lines.firstIndex { $0.contains("Reports/") }!
        #expect(rows[cursor] != rows[cursor + 1] && rows[cursor].contains("r"), "\(rows[cursor])")
        #expect(Set(rows[0]).count > 1, "the header is one style: the active tab is invisible")
    }

    @Test func asciiGlyphsAndNarrowWidth() {
        let screen = Renderer.render(Fixtures.state(), width: 60, height: 16, context: RenderContext(theme: Fixtures.theme, ascii: true, now: Fixtures.t0))
        Fixtures.golden("files-ascii-60x16", screen)
        // Nothing is UTF-8: box drawing, glyphs, separators, and names too (`🎉` and CJK become
        // `??`, keeping their width; accents go).
        #expect(screen.lines.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } }, "\(screen.lines.joined(separator: "\n"))")
        // Help and a prompt with its caret, too.
        var s = Fixtures.state()
        s.flash = Flash(text: "saved café… → ok", level: .info)
        s.help = true
        let help = Renderer.render(s, width: 80, height: 30, context: RenderContext(theme: Fixtures.theme, ascii: true, now: Fixtures.t0))
        #expect(help.lines.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } }, "\(help.lines.joined(separator: "\n"))")
        #expect(help.lines.contains { $0.contains("j k ^ v") }, "\(help.lines.joined(separator: "\n"))")
    }

    @Test func conflictsVersionsAndSettings() {
        var s = Fixtures.state(view: .conflicts)
        Fixtures.golden("conflicts-80x24", Renderer.render(s, width: 80, height: 24, context: ctx))
        let rec = { (n: Int, dev: String, size: Int, state: VersionState) in
            VersionRecord(id: VersionID(uuid: UUID(uuidString: String(format: "00000000-0000-4000-9000-%012d", n))!), state: state, size: size,
                          hash: ContentHash.of(Array("v\(n)".utf8)), modified: Fixtures.t0.addingTimeInterval(Double(n) * 3600), committed: Fixtures.t0,
                          device: DeviceID(uuid: UUID()), deviceName: dev, uploaded: true)
        }
        var v = VersionsState(path: try! RelativePath(validating: "Documents/plan.txt"))
        v.rows = [VersionRow(kind: .current, record: rec(1, "laptop", 12, .current)), VersionRow(kind: .conflict, record: rec(2, "phone", 13, .conflict)),
                  VersionRow(kind: .history, record: rec(3, "laptop", 10, .other))]
        v.loading = false
        v.cursor.index = 1
        v.preview = ["milk", "eggs", "bread"]
        v.currentText = ["milk", "bread"]
        v.previewFor = v.rows[1].record.id
        s.versions = v
        Fixtures.golden("versions-preview", Renderer.render(s, width: 80, height: 24, context: ctx))
        // 120 columns: the two versions side by side; Tab focuses them, `/` finds and marks text,
        // `n` goes to the next match and the panes scroll together.
        var wide = s
        wide.versions?.preview = (1...40).map { "line \($0)" } + ["eggs"]
        wide.versions?.currentText = (1...40).map { "line \($0)" }
        _ = wide.handle(.tab)
        _ = wide.handle(.char("/"))
        for k in Key.typing("EGGS") + [.enter] { _ = wide.handle(k) }
        #expect(wide.versions?.found == 40 && wide.versions?.scroll == 37 && wide.versions?.contentFocused == true, "a few lines above the match")
        let side = Renderer.render(wide, width: 120, height: 30, context: ctx)
        Fixtures.golden("versions-side-by-side-120x30", side)
        let eggs = side.lines.firstIndex { $0.contains("eggs") }!
        let col = side.lines[eggs].distance(from: side.lines[eggs].startIndex, to: side.lines[eggs].range(of: "eggs")!.lowerBound)
        #expect(side[col, eggs].role == "ui.marked", "the match is marked")
        #expect(side.lines.contains { $0.contains("current · laptop") && $0.contains("conflict · phone") }, "side by side")
        #expect(side.lines.contains { $0.contains("line 38") && $0.contains("line 40") == false }, "both panes scrolled together")
        _ = wide.handle(.char("g"))
        _ = wide.handle(.char("n"))
        #expect(wide.versions?.found == 40 && wide.versions?.scroll == 37, "n finds it again from the top")
        _ = wide.handle(.char("n"))
        #expect(wide.versions?.found == 40 && wide.flash?.text == "search wrapped around", "the only match: n wraps to it")
        // + gives the content the whole view (the list of versions hidden), and back.
        _ = wide.handle(.char("+"))
        let maxed = Renderer.render(wide, width: 120, height: 30, context: ctx)
        #expect(!maxed.lines.joined().contains("Versions of") && maxed.lines.contains { $0.contains("line 38") }, "the list is hidden, the content shown")
        _ = wide.handle(.char("+"))
        #expect(Renderer.render(wide, width: 120, height: 30, context: ctx).lines.joined().contains("Versions of"))
        _ = wide.handle(.tab)
        _ = wide.handle(.escape)
        #expect(wide.versions?.contentFocused == false && wide.versions != nil, "Esc leaves the content first")
        s.versions?.showDiff = true
        let diff = Renderer.render(s, width: 80, height: 24, context: ctx)
        Fixtures.golden("versions-diff", diff)
        let add = diff.lines.firstIndex { $0.contains("+ eggs") }!
        #expect(diff.roles(line: add)[4] == "diff.add")
        s.versions = nil
        s.view = .settings
        let dev = DeviceID(uuid: UUID())
        s.settings.all = [KVEntry(key: "fontSize", value: .int(14), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: dev),
                              KVEntry(key: "theme", value: .string("dark"), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: dev),
                              KVEntry(key: "recent", value: .array([.string("a.txt"), .int(2)]), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: dev)]
        s.settings.usage = (3, 40)
        s.settings.highlighted["theme"] = Fixtures.t0.addingTimeInterval(2)
        let settings = Renderer.render(s, width: 80, height: 24, context: ctx)
        Fixtures.golden("settings-80x24", settings)
        let themeRow = settings.lines.firstIndex { $0.contains("dark") }!
        #expect(settings.roles(line: themeRow)[5] == "kv.remote", "a key changed elsewhere is highlighted")
        // After the highlight time it is drawn normally.
        let later = Renderer.render(s, width: 80, height: 24, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0.addingTimeInterval(5)))
        #expect(later.roles(line: themeRow)[5] != "kv.remote")
    }

    @Test func overlaysAndTooSmall() {
        var s = Fixtures.state()
        s.help = true
        Fixtures.golden("help-files", Renderer.render(s, width: 80, height: 24, context: ctx))
        s.help = false
        _ = s.handle(.char("D"))
        Fixtures.golden("confirm-delete", Renderer.render(s, width: 80, height: 24, context: ctx))
        let tiny = Renderer.render(s, width: 30, height: 8, context: ctx)
        #expect(tiny.lines.joined().contains("terminal too small"))
    }

    @Test func controlCharactersInNamesNeverReachTheTerminal() {
        var buf = ScreenBuffer(width: 20, height: 1)
        buf.put("a\u{1B}[2Jb\u{07}", x: 0, y: 0)
        #expect(buf.lines[0].hasPrefix("a?[2Jb?"))
        #expect(!buf.lines[0].unicodeScalars.contains { $0.value < 0x20 })
        // Nor do the characters that turn text around (`txt.exe` shown as `exe.txt`).
        var bidi = ScreenBuffer(width: 20, height: 1)
        bidi.put("a\u{202E}txt.exe\u{2066}\u{200F}", x: 0, y: 0)
        #expect(bidi.lines[0].hasPrefix("a?txt.exe??"), "\(bidi.lines[0].debugDescription)")
        // A wide character never straddles the edge.
        var edge = ScreenBuffer(width: 5, height: 1)
        edge.put("abcd文", x: 0, y: 0)
        #expect(edge.lines[0] == "abcd ")
    }
}
