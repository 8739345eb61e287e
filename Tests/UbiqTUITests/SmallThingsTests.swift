import Foundation
import Testing
import UbiqCore
import UbiqDaemonProtocol
import UbiqTesting
import UbiqEngine
@testable import UbiqTUI

/// #44 rows 6–8 and 10: the small things lazygit and k9s users reach for — where the cursor
/// stands in a long list, filters that follow the typing, a command line with history and
/// completion that closes after an error, and an open range that shows.
@Suite("Front end: the small things")
struct SmallThingsTests {
    func press(_ s: inout AppState, _ keys: [Key]) -> [Effect] { keys.flatMap { s.handle($0) } }
    let ctx = RenderContext(theme: Fixtures.theme, now: Fixtures.t0)

    /// A folder of 10,000 files.
    static func big() -> AppState {
        var s = AppState()
        s.files.gather([Fixtures.item(1, "Documents", kind: .folder, size: 0)]
            + (0..<10_000).map { Fixtures.item(100 + $0, String(format: "Documents/f%05d.txt", $0)) })
        s.files.open(try! RelativePath(validating: "Documents"))
        return s
    }

    /// Row 6: the title said only "(10000)".
    @Test func aLongListSaysWhereTheCursorIsAndMarksTheScroll() {
        var s = Self.big()
        var screen = Renderer.render(s, width: 80, height: 24, context: ctx)
        #expect(screen.lines[1].contains("(1 of 10000)"), "\(screen.lines[1])")
        let markAt = { (screen: ScreenBuffer) in (2..<22).first { screen[79, $0].text == "┃" } }
        #expect(markAt(screen) == 2, "the scroll mark at the top")
        _ = press(&s, [.char("G")])
        screen = Renderer.render(s, width: 80, height: 24, context: ctx)
        #expect(screen.lines[1].contains("(10000 of 10000)"), "\(screen.lines[1])")
        let bottom = markAt(screen)
        #expect(bottom != nil && bottom! > 15, "the scroll mark near the bottom: \(String(describing: bottom))")
        _ = press(&s, [.char("g")] + Array(repeating: Key.pageDown, count: 250))
        screen = Renderer.render(s, width: 80, height: 24, context: ctx)
        let middle = markAt(screen)
        #expect(middle != nil && middle! > 5 && middle! < bottom!, "half-way, the mark is half-way: \(String(describing: middle))")
        // A short list has no scroll mark.
        let short = Renderer.render(Fixtures.state(), width: 80, height: 24, context: ctx)
        #expect((2..<22).allSatisfy { short[79, $0].text != "┃" })
    }

    /// Row 7: `/` filtered only on Enter.
    @Test func filtersFollowTheTyping() {
        var s = Self.big()
        _ = press(&s, [.char("/")] + Key.typing("f0999"))
        #expect(s.prompt != nil && s.files.rows.count == 10, "filtered while typing: \(s.files.rows.count)")
        _ = press(&s, [.char("9")])
        #expect(s.files.rows.map(\.item.name) == ["f09999.txt"])
        // A predicate on its way keeps the last one that parsed; Enter says what is wrong.
        _ = press(&s, [.ctrlU] + Key.typing("size >"))
        #expect(s.prompt?.error == nil)
        _ = press(&s, [.enter])
        #expect(s.prompt?.error != nil, "Enter says why")
        _ = press(&s, Key.typing(" 1000"))
        #expect(s.files.rows.count == 10_000, "size > 1000: every file (1,234 bytes)")
        // Esc takes the typed filter back.
        _ = press(&s, [.escape])
        #expect(s.prompt == nil && s.files.filterText.isEmpty && s.files.rows.count == 10_000)
        // The help and Settings filter as they are typed too.
        s.help = true
        _ = press(&s, [.char("/")] + Key.typing("evict"))
        #expect(s.helpFilter == "evict")
        _ = press(&s, [.escape])
        #expect(s.helpFilter.isEmpty)
    }

    /// Row 8: no completion, no history; a bad command left the prompt open with its text.
    @Test func theCommandLineRemembersAndCompletes() {
        var s = Fixtures.state()
        _ = press(&s, [.char(":")] + Key.typing("fo") + [.tab])
        #expect(s.prompt?.text == "fo", "nothing starts with fo: unchanged")
        _ = press(&s, [.ctrlU] + Key.typing("fi") + [.tab])
        #expect(s.prompt?.text == "files")
        _ = press(&s, [.enter])
        #expect(s.view == .files && s.prompt == nil)
        _ = press(&s, [.char(":")] + Key.typing("t") + [.tab])
        #expect(s.prompt?.text == "t" && s.flash?.text == "theme  trash", "two choices listed: \(s.flash?.text ?? "")")
        _ = press(&s, Key.typing("h") + [.tab])
        #expect(s.prompt?.text == "theme ", "one choice: completed with its space")
        _ = press(&s, [.ctrlU] + Key.typing("sort si") + [.tab])
        #expect(s.prompt?.text == "sort size")
        _ = press(&s, [.enter])
        #expect(s.files.sortKey == .size)
        _ = press(&s, [.char(":")] + Key.typing("kv") + [.enter])
        #expect(s.view == .settings)
        // ↑ brings back the commands run, newest first; ↓ returns to the empty line.
        _ = press(&s, [.char(":"), .up])
        #expect(s.prompt?.text == "kv")
        _ = press(&s, [.up])
        #expect(s.prompt?.text == "sort size")
        _ = press(&s, [.up, .up, .up])
        #expect(s.prompt?.text == "files", "the oldest stays")
        _ = press(&s, [.down, .down, .down])
        #expect(s.prompt?.text == "")
        // A bad command closes the prompt with the reason; ↑ brings it back to mend.
        _ = press(&s, Key.typing("fo") + [.enter])
        #expect(s.prompt == nil && s.flash?.level == .error)
        _ = press(&s, [.char(":"), .up])
        #expect(s.prompt?.text == "fo")
    }

    /// Row 10: `v` … `v` marked a range, but nothing showed that one was open.
    @Test func anOpenRangeShows() {
        var s = Fixtures.state()
        s.files.cursor.index = 2
        _ = press(&s, [.char("v")])
        #expect(s.files.rangeOpen && s.flash?.text.contains("range open") == true)
        _ = press(&s, [.char("j"), .char("j")])
        let screen = Renderer.render(s, width: 80, height: 24, context: ctx)
        #expect(screen.lines[1].contains("range of 3"), "\(screen.lines[1])")
        let rows = (2..<22).filter { screen[1, $0].text == "▌" }
        #expect(rows.count == 3, "the open range's rows carry the bar: \(rows)")
        _ = press(&s, [.char("v")])
        #expect(!s.files.rangeOpen && s.files.marked.count == 3)
        // Esc cancels an open range before it clears marks.
        _ = press(&s, [.char("j"), .char("v"), .escape])
        #expect(!s.files.rangeOpen && s.files.marked.count == 4, "the row v opened on stays marked")
    }
}

/// #44 row 13: under `--ascii`, `日本語のメモ.txt` showed as `????????????.txt` and an emoji
/// name as `??` — such names could not be told apart.
@Suite("Front end: names under --ascii")
struct ASCIINameTests {
    @Test func namesStayASCIIAndApart() {
        #expect(ASCIINames.escape("plain name.txt") == "plain name.txt")
        let a = ASCIINames.escape("日本語のメモ.txt"), b = ASCIINames.escape("日本語のノート.txt")
        #expect(a != b && a.hasSuffix(".txt") && a.hasPrefix("~"), "\(a) \(b)")
        #expect(ASCIINames.escape("café.txt").hasPrefix("cafe~"), "accents kept readable: \(ASCIINames.escape("café.txt"))")
        #expect(ASCIINames.escape("café.txt") != ASCIINames.escape("cafe\u{301}x.txt"))
        #expect(ASCIINames.escape("party 🎉.md") != ASCIINames.escape("party 🎈.md"))
        // Seeded: distinct names stay distinct (and ASCII) once escaped.
        var rng = SeededRandom.forTest("tui.ascii-names")
        let pool: [Character] = ["a", "b", ".", "日", "本", "é", "ü", "🎉", "🎈", "ß", "ø"]
        var seen: [String: String] = [:]
        for _ in 0..<FuzzCases.count(5_000) {
            let name = String((0..<Int.random(in: 1...8, using: &rng)).map { _ in pool.randomElement(using: &rng)! })
            let shown = ASCIINames.escape(name)
            #expect(shown.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }, "\(name) → \(shown)")
            if let other = seen[shown] { #expect(other == name, "\(name) and \(other) both show as \(shown)") }
            seen[shown] = name
        }
    }

    @Test func theFilesViewShowsThemEscaped() {
        var s = AppState()
        s.files.gather([Fixtures.item(1, "Documents", kind: .folder, size: 0), Fixtures.item(2, "Documents/日本語のメモ.txt"),
                        Fixtures.item(3, "Documents/日本語のノート.txt"), Fixtures.item(4, "Documents/party 🎉.md")])
        s.files.open(try! RelativePath(validating: "Documents"))
        var screen = Renderer.render(s, width: 80, height: 24, context: RenderContext(theme: Fixtures.theme, ascii: true, now: Fixtures.t0))
        screen.foldToASCII()
        let names = screen.lines.filter { $0.contains(".txt") }
        #expect(names.count == 2 && names[0] != names[1] && !names.joined().contains("?"), "\(names)")
        #expect(screen.lines.contains { $0.contains("party ~") })
    }
}

/// #44 rows 4 and 5: offline looked like online in the header, the status line said
/// `‖ offline` alone, and an "offline: cannot reach" error stayed after the server was back.
@Suite("Front end: offline and paused")
struct OfflineStateTests {
    let ctx = RenderContext(theme: Fixtures.theme, now: Fixtures.t0)

    func status(_ state: EngineStatus.State, paused: Bool = false, waiting: Int, retryIn: Double? = nil) -> EngineStatus {
        var s = EngineStatus(state: state, idle: false, account: "alice", server: "http://127.0.0.1:8737", device: "laptop", container: "iCloud.default")
        s.paused = paused ? true : nil
        s.waiting = waiting
        s.retryIn = retryIn
        return s
    }

    @Test func theStateLineSaysWhatWaitsAndWhenTheServerIsTriedAgain() {
        var s = Fixtures.state()
        _ = s.apply(.status(status(.offline, waiting: 3, retryIn: 3.2), throughput: 0))
        var screen = Renderer.render(s, width: 100, height: 24, context: ctx)
        #expect(screen.lines[22].contains("offline · 3 waiting · retry in 4 s"), "\(screen.lines[22])")
        // The header's state in a colour of its own.
        let x = screen.lines[0].distance(from: screen.lines[0].startIndex, to: screen.lines[0].range(of: "offline")!.lowerBound)
        #expect(screen[x, 0].role == "ui.header.offline" && screen[0, 0].role == "ui.header")
        _ = s.apply(.status(status(.online, paused: true, waiting: 2), throughput: 0))
        screen = Renderer.render(s, width: 100, height: 24, context: ctx)
        #expect(screen.lines[22].contains("paused · 2 waiting") && !screen.lines[22].contains("retry"), "\(screen.lines[22])")
        _ = s.apply(.status(status(.online, waiting: 1), throughput: 0))
        screen = Renderer.render(s, width: 100, height: 24, context: ctx)
        #expect(screen.lines[22].contains("1 waiting") && !screen.lines[22].contains("up to date"), "\(screen.lines[22])")
        let online = screen.lines[0].distance(from: screen.lines[0].startIndex, to: screen.lines[0].range(of: "online")!.lowerBound)
        #expect(screen[online, 0].role == "ui.header")
        _ = s.apply(.status(status(.online, waiting: 0), throughput: 0))
        #expect(Renderer.render(s, width: 100, height: 24, context: ctx).lines[22].contains("up to date"))
    }

    /// #42: out of inotify watches, the status line says that changes are seen late, and where
    /// to read why; it goes when the engine watches everything again.
    @Test func theStateLineSaysWhenNotEveryFolderIsWatched() {
        var s = Fixtures.state()
        var st = status(.online, waiting: 0)
        st.watch = "12 folders are not watched: inotify is out of watches …"
        _ = s.apply(.status(st, throughput: 0))
        let line = Renderer.render(s, width: 120, height: 24, context: ctx).lines[22]
        #expect(line.contains("up to date") && line.contains("not every folder is watched: changes seen within 30 s (ubiq status)"), "\(line)")
        st.watch = nil
        _ = s.apply(.status(st, throughput: 0))
        #expect(!Renderer.render(s, width: 120, height: 24, context: ctx).lines[22].contains("watched"))
    }

    @Test func anOfflineErrorGoesWhenTheServerIsBack() {
        var s = Fixtures.state()
        _ = s.apply(.failed("cannot reach http://127.0.0.1:8737: connection refused", code: .serverUnreachable))
        _ = s.apply(.status(status(.offline, waiting: 0), throughput: 0))
        #expect(s.flash != nil, "kept while it holds")
        _ = s.apply(.status(status(.online, waiting: 0), throughput: 0))
        #expect(s.flash == nil, "gone once online")
        // Other errors stay their time — whatever their words say (the code decides, #38 §4).
        _ = s.apply(.failed("offline: the word alone is not the code", code: .notFound))
        _ = s.apply(.status(status(.online, waiting: 0), throughput: 0))
        #expect(s.flash?.text.contains("the word alone") == true)
        _ = s.apply(.failed("theme 'x': no such theme"))
        _ = s.apply(.status(status(.online, waiting: 0), throughput: 0))
        #expect(s.flash?.text.contains("theme") == true)
    }
}

/// #44 row 3: the status line counted what remained (`↑ 10000 … 0%` for a whole batch); it now
/// says files done of the run's files, with its bytes' share, throughput and ETA.
@Suite("Front end: progress of a run")
struct RunProgressTests {
    @Test func theStatusLineCountsFilesDoneOfTheRun() {
        var s = Fixtures.state()
        var st = EngineStatus(state: .online, idle: false, account: "alice", server: "http://127.0.0.1:8737", device: "laptop", container: "iCloud.default")
        st.uploads = EngineStatus.Transfers(queued: 270, running: 10, bytesDone: 1_000_000, bytesTotal: 4_000_000)
        st.uploads.done = 120
        st.uploads.filesTotal = 400
        _ = s.apply(.status(st, throughput: 500_000))
        let line = Renderer.render(s, width: 100, height: 24, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0)).lines[22]
        #expect(line.contains("↑ 120/400") && line.contains("25%") && line.contains("ETA"), "\(line)")
    }
}

/// #44 row 11: quitting a front end that runs the engine itself with changes waiting asks first;
/// the folder shown is remembered for the next start.
@Suite("Front end: quitting and coming back")
struct QuitAndReturnTests {
    @Test func quitAsksOnlyWhenSyncingWouldStopWithChangesWaiting() {
        var s = Fixtures.state()
        s.status.waiting = 2
        #expect(s.handle(.char("q")) == [.quit], "a daemon goes on syncing: no question")
        s = Fixtures.state()
        s.engineInProcess = true
        s.status.waiting = 2
        #expect(s.handle(.char("q")).isEmpty && s.confirm?.message.hasPrefix("2 changes waiting to go up") == true)
        _ = s.handle(.char("n"))
        #expect(s.confirm == nil && !s.quit)
        _ = s.handle(.char("q"))
        #expect(s.handle(.char("y")) == [.quit])
        s = Fixtures.state()
        s.engineInProcess = true
        #expect(s.handle(.char("q")) == [.quit], "nothing waits: no question")
    }

    @Test func theLastFolderIsRestoredOnceListed() throws {
        var s = AppState()
        s.folderToRestore = try RelativePath(validating: "Documents/Reports")
        s.restoreFolderIfListed()
        #expect(s.files.folder == nil, "not listed yet")
        _ = s.apply(.gathered(Fixtures.items))
        #expect(s.files.folder?.string == "Documents/Reports" && s.folderToRestore == nil)
        // A folder no longer there is not opened; a key in Files drops the wish.
        var t = AppState()
        t.folderToRestore = try RelativePath(validating: "Documents/Gone")
        _ = t.apply(.gathered(Fixtures.items))
        #expect(t.files.folder == nil && t.folderToRestore != nil)
        _ = t.handle(.char("j"))
        #expect(t.folderToRestore == nil)
    }

    @Test func lastFoldersAreKeptPrivateAndBounded() throws {
        let dir = try TempDirectory("ubiq-last-folders")
        defer { dir.remove() }
        let places = LastFolders(environment: ["XDG_STATE_HOME": dir.url.path])
        places.remember("Documents/Reports", for: "alice@s laptop iCloud.default")
        #expect(places.folder(for: "alice@s laptop iCloud.default") == "Documents/Reports")
        let mode = (try FileManager.default.attributesOfItem(atPath: places.url.path)[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o600, "\(String(mode, radix: 8))")
        for i in 0..<100 { places.remember("f\(i)", for: "k\(i)") }
        #expect(places.folder(for: "alice@s laptop iCloud.default") == nil && places.folder(for: "k99") == "f99", "at most 64 kept, the newest")
        // A broken file is ignored (and replaced by the next write).
        try Data("{not json".utf8).write(to: places.url)
        #expect(places.folder(for: "k99") == nil)
        places.remember("x", for: "k")
        #expect(places.folder(for: "k") == "x")
    }
}

/// #44 row 12: the help box's bottom border drew over the status line; at 60 columns the tabs
/// were bare numbers with room to spare; "1 hunk(s) settled".
@Suite("Front end: polish")
struct PolishTests {
    let ctx = RenderContext(theme: Fixtures.theme, now: Fixtures.t0)

    @Test func theHelpLeavesTheStatusLineAlone() {
        var s = Fixtures.state()
        s.help = true
        for h in [16, 24, 30] {
            let screen = Renderer.render(s, width: 80, height: h, context: ctx)
            #expect(screen.lines[h - 2].contains("up to date"), "at \(h) rows: \(screen.lines[h - 2])")
        }
    }

    @Test func tabsKeepTheirNamesAtSixtyColumnsWhenTheyFit() {
        var s = Fixtures.state()
        s.status.conflicts = 0
        let header = Renderer.render(s, width: 60, height: 20, context: ctx).lines[0]
        #expect(header.contains("1 Files") && header.contains("2 Conflicts") && header.contains("3 Settings") && header.contains("4 Trash")
                && header.contains("online"), "\(header)")
    }

    @Test func countsSayTheirNounsRight() {
        #expect(Counted.of(1, "hunk") == "1 hunk" && Counted.of(2, "hunk") == "2 hunks" && Counted.of(0, "item") == "0 items")
        var c = ConflictChoices()
        c.stage([try! RelativePath(validating: "Documents/plan.txt")], .conflict)
        #expect(c.summary == "keep the conflict for plan.txt")
    }
}

/// #44 row 9: at 100 columns a long value was cut at 25 characters beside 20 empty columns; the
/// history cut values with no `…`; a long value could be read only by starting to edit it.
@Suite("Front end: long settings")
struct LongSettingsTests {
    let ctx = RenderContext(theme: Fixtures.theme, now: Fixtures.t0)
    static let long = "https://example.com/a/very/long/path/that/goes/on?" + String(repeating: "and-on-", count: 40) + "THE-END"

    func state() -> AppState {
        var s = Fixtures.state(view: .settings)
        let dev = DeviceID(uuid: UUID())
        s.settings.all = [KVEntry(key: "url", value: .string(Self.long), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: dev),
                          KVEntry(key: "theme", value: .string("dark"), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: dev)]
        s.settings.deviceNames[dev] = "laptop"
        return s
    }

    @Test func theValueColumnTakesTheRoomAndVShowsAllOfIt() {
        var s = state()
        var screen = Renderer.render(s, width: 100, height: 24, context: ctx)
        let row = screen.lines.first { $0.contains("url") && $0.contains("https://") }!
        let shown = row.components(separatedBy: "https://")[1].prefix { $0 != " " }
        #expect(shown.count >= 40, "the value gets the room the other columns leave: \(row)")
        // v: the whole value, read only; Esc closes it.
        s.settings.cursor.index = s.settings.entries.firstIndex { $0.key == "url" }!
        _ = s.handle(.char("v"))
        screen = Renderer.render(s, width: 100, height: 24, context: ctx)
        let text = screen.lines.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "│ ")) }.joined()
        #expect(text.contains("THE-END") && screen.lines.joined().contains("read only"), "\(screen.lines.joined(separator: "\n"))")
        // Every character of the value is on screen, in order (the box's rows, inside its borders).
        let top = screen.lines.firstIndex { $0.contains("read only") }!
        var body = ""
        for y in (top + 1)..<screen.height {
            let cells = (4..<96).map { screen[$0, y].text }.joined()
            if screen[2, y].text == "└" { break }
            body += cells.trimmingCharacters(in: .whitespaces)
        }
        #expect(body.contains(Self.long), "\(body)")
        _ = s.handle(.escape)
        #expect(s.settings.viewing == nil && s.view == .settings)
    }
}

/// #44 row 12: no mouse at all. A click on a tab switches to it, on a row selects it; the wheel
/// moves as the arrow keys do (the terminal driver turns it into ↑ / ↓).
@Suite("Front end: the mouse")
struct MouseTests {
    let ctx = RenderContext(theme: Fixtures.theme, now: Fixtures.t0)

    func click(_ s: inout AppState, on text: String, width: Int = 80, height: Int = 24) -> Bool {
        let screen = Renderer.render(s, width: width, height: height, context: ctx)
        guard let y = screen.lines.firstIndex(where: { $0.contains(text) }) else { return false }
        let x = screen.lines[y].distance(from: screen.lines[y].startIndex, to: screen.lines[y].range(of: text)!.lowerBound)
        guard let key = screen.key(atX: x, y: y) else { return false }
        _ = s.handle(key)
        return true
    }

    @Test func clicksSelectRowsAndSwitchTabs() {
        var s = Fixtures.state()
        #expect(click(&s, on: "plan.txt"))
        #expect(s.files.selected?.item.name == "plan.txt")
        #expect(click(&s, on: "3 Settings") && s.view == .settings)
        #expect(click(&s, on: "1 Files") && s.view == .files)
        // Nothing under the click: nothing happens.
        let screen = Renderer.render(s, width: 80, height: 24, context: ctx)
        #expect(screen.key(atX: 0, y: 22) == nil, "the status line does nothing")
    }
}

@Suite("Command history")
struct CommandHistoryTests {
    @Test func keepsFiftyOnceEachAndRecallsNewestFirst() {
        var h = CommandHistory()
        #expect(h.recall(-1) == nil, "nothing run yet")
        for i in 0..<60 { h.ran("theme  t\(i)") }
        #expect(h.history.count == 50 && h.history.first == "theme t10" && h.history.last == "theme t59", "spaces collapsed, oldest dropped")
        h.ran("theme t20")
        #expect(h.history.count == 50 && h.history.last == "theme t20" && h.history.filter { $0 == "theme t20" }.count == 1)
        #expect(h.recall(-1) == "theme t20" && h.recall(-1) == "theme t59" && h.recall(1) == "theme t20" && h.recall(1) == "")
        h.ran("   ")
        #expect(h.history.count == 50, "an empty line is not remembered")
    }

    @Test func completesAsFarAsTheChoicesAgree() {
        let sort = ["name", "size", "modified", "status"]
        #expect(CommandHistory.complete("c", sortFields: sort)! == ("con", ["conflicts", "container"]))
        #expect(CommandHistory.complete("hel", sortFields: sort)! == ("help", []))
        #expect(CommandHistory.complete("cont", sortFields: sort)! == ("container ", []))
        #expect(CommandHistory.complete("sort m", sortFields: sort)! == ("sort modified", []))
        #expect(CommandHistory.complete("x", sortFields: sort) == nil)
    }
}
