import Foundation
import Testing
import UbiqCore
import UbiqTesting

extension ProcessBoundTests {
    /// The front end in a real terminal (tmux) against a real server, with a second device working
    /// from the command line: files listed, a file from the other device appearing live, a
    /// conflict marked and resolved with keys, a setting arriving live, resize, and `q` restoring
    /// the terminal.
    @Suite("Front end in tmux", .serialized)
    struct TUIEndToEndTests {
        typealias Setup = ItemCommandTests.Setup

        /// How many SGR parameters in `screen` set a colour (30–37, 38, 40–47, 48, 90–97, 100–107).
        static func colourCodes(_ screen: String) -> Int {
            var n = 0
            for part in screen.components(separatedBy: "\u{1B}[").dropFirst() {
                guard let m = part.firstIndex(of: "m"), part[..<m].allSatisfy({ $0.isNumber || $0 == ";" }) else { continue }
                for p in part[..<m].split(separator: ";").compactMap({ Int($0) }) where (30...37).contains(p) || (40...47).contains(p) || p == 38 || p == 48
                    || (90...97).contains(p) || (100...107).contains(p) { n += 1 }
            }
            return n
        }

        /// #44 row 11: `q` with a change still waiting quit silently (syncing stops with a front
        /// end that runs the engine itself), and the next start was at `/`, not the folder left.
        @Test func quitAsksWhileChangesWaitAndTheFolderIsRemembered() async throws {
            guard TmuxSession.available else { Issue.record("tmux is not installed"); return }
            let s = try Setup()
            defer { s.teardown() }
            try s.login("A")
            try s.write("A", "Documents/Reports/q1.txt", "first quarter")
            let t = try TmuxSession(width: 100, height: 30)
            defer { t.kill() }
            try t.startFrontEnd(home: s.home("A"))
            #expect(t.waitFor("Documents/"), "\(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor { $0.contains("Reports/") && $0.contains("up to date") }, "\(t.capture())")
            // Paused, a new file waits; q asks, n keeps the front end running.
            try t.send("P")
            #expect(t.waitFor("paused"), "\(t.capture())")
            try s.write("A", "Documents/waiting.txt", "not yet up")
            #expect(t.waitFor("1 waiting"), "\(t.capture())")
            try t.send("q")
            #expect(t.waitFor("1 change waiting to go up; syncing stops when you quit"), "\(t.capture())")
            try t.send("n")
            #expect(t.waitFor("cancelled") && !t.capture().contains("EXIT="), "\(t.capture())")
            // Resumed, it goes up; then q quits at once.
            try t.send("P")
            #expect(t.waitFor(timeout: 30) { $0.contains("up to date") }, "\(t.capture())")
            #expect(t.quitFrontEnd("EXIT=0"), "\(t.capture())")
            // Started again, it opens where it was left.
            try t.startFrontEnd(home: s.home("A"), prefix: "clear; ", marker: "EXIT2")
            #expect(t.waitFor { $0.contains("Files · Documents/") && $0.contains("waiting.txt") }, "\(t.capture())")
            #expect(t.quitFrontEnd("EXIT2=0"), "\(t.capture())")
        }

        /// #44 row 12: no mouse at all. A click (an xterm mouse report, as a terminal sends it)
        /// on a tab switches to it, on a row selects it; the wheel moves the selection.
        @Test func theMouseSwitchesTabsAndSelectsRows() async throws {
            guard TmuxSession.available else { Issue.record("tmux is not installed"); return }
            let s = try Setup()
            defer { s.teardown() }
            try s.login("A")
            for name in ["alpha.txt", "beta.txt", "gamma.txt"] { try s.write("A", "Documents/\(name)", name) }
            let t = try TmuxSession(width: 100, height: 30)
            defer { t.kill() }
            try t.startFrontEnd(home: s.home("A"))
            #expect(t.waitFor("Documents/"), "\(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor("gamma.txt"), "\(t.capture())")
            /// Where `text` is on the screen (column, row), 0-based.
            func place(_ text: String) -> (Int, Int)? {
                let lines = t.capture().components(separatedBy: "\n")
                guard let y = lines.firstIndex(where: { $0.contains(text) }) else { return nil }
                return (lines[y].distance(from: lines[y].startIndex, to: lines[y].range(of: text)!.lowerBound), y)
            }
            /// A press and a release of the first button at (x, y), as an xterm reports them.
            func click(_ at: (Int, Int)) throws {
                func report(_ b: Int) -> String { "\u{1B}[M" + String(UnicodeScalar(UInt8(32 + b))) + String(UnicodeScalar(UInt8(33 + at.0))) + String(UnicodeScalar(UInt8(33 + at.1))) }
                try t.type(report(0) + report(3))
            }
            try click(try #require(place("gamma.txt")))
            #expect(t.waitFor { $0.contains("Files · Documents/ (3 of 3)") }, "the clicked row is selected: \(t.capture())")
            try click(try #require(place("3 Settings")))
            #expect(t.waitFor("no settings yet"), "the clicked tab is shown: \(t.capture())")
            #expect(t.waitFor(timeout: 60) { $0.contains("up to date") }, "\(t.capture())")
            #expect(t.quitFrontEnd("EXIT=0"), "\(t.capture())")
        }

        @Test func browseWatchResolveEditSettingsResizeQuit() async throws {
            guard TmuxSession.available else { Issue.record("tmux is not installed"); return }
            let s = try Setup()
            defer { s.teardown() }
            try s.login("A"); try s.login("B")
            try s.write("B", "Documents/hello.txt", "hello from B")
            try s.write("B", "Documents/plan.txt", "the plan, v1")
            try s.write("B", "Documents/报告 🎉.txt", "wide names")
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            let t = try TmuxSession(width: 100, height: 30)
            defer { t.kill() }
            try t.startFrontEnd(home: s.home("A"))
            #expect(t.waitFor("Documents/"), "\(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor("hello.txt") && t.waitFor("plan.txt"), "\(t.capture())")
            #expect(t.capture().contains("报告 🎉.txt"))
            // A file written on B appears live.
            try s.write("B", "Documents/from B.txt", "new")
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            #expect(t.waitFor("from B.txt"), "\(t.capture())")
            // Both devices edit plan.txt: a conflict, marked, resolved with keys.
            #expect(await eventually { s.read("A", "Documents/plan.txt") == "the plan, v1" })
            try s.write("A", "Documents/plan.txt", "the plan, edited on A")
            try s.write("B", "Documents/plan.txt", "the plan, edited on B, longer")
            _ = try s.ubiq("B", ["sync"])
            #expect(t.waitFor("1 conflict", timeout: 30), "\(t.capture())")
            try t.send("2")
            // The tab's count comes with the engine's status, the list with the live query's next
            // batch: Enter is pressed once the conflict is listed (before, it could land on an
            // empty list when the machine was busy).
            #expect(t.waitFor("⚠ Documents/plan.txt"), "\(t.capture())")
            try t.send("Enter")
            // The selected version's content: "Preview: …" while it loads, then beside the current one.
            #expect(t.waitFor("Versions of Documents/plan.txt") && t.waitFor { $0.contains("Preview:") || $0.contains("conflict · B") }, "\(t.capture())")
            #expect(t.waitFor("edited on"), "the preview shows the selected version's text: \(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor("Keep the version from"), "\(t.capture())")
            try t.send("y")
            #expect(t.waitFor("Conflicts (0)", timeout: 30), "\(t.capture())")
            let (_, status, _) = try s.ubiq("B", ["status", "--json"])
            #expect(status.contains("\"conflicts\" : 0"), "\(status)")
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            #expect(s.read("A", "Documents/plan.txt") == s.read("B", "Documents/plan.txt"))
            // A setting set on B appears live in the Settings view.
            try t.send("3")
            #expect(t.waitFor("Settings ("), "\(t.capture())")
            #expect(try s.ubiq("B", ["kv", "set", "accent", "teal"]).0 == 0)
            #expect(t.waitFor { $0.contains("accent") && $0.contains("teal") }, "\(t.capture())")
            // Add a setting with keys; B reads it.
            try t.send("a")
            try t.type("volume")
            try t.send("Enter", "C-u")
            try t.type("int")
            try t.send("Enter")
            try t.type("11")
            try t.send("Enter")
            #expect(t.waitFor("saved volume"), "\(t.capture())")
            #expect(try s.ubiq("B", ["kv", "get", "volume"]).1.contains("11"))
            // Resize to 80×24, then too small, then back.
            try t.resize(width: 80, height: 24)
            #expect(t.waitFor { screen in screen.split(separator: "\n").first.map { $0.count <= 80 && $0.contains("3 Settings") } ?? false }, "\(t.capture())")
            try t.resize(width: 30, height: 8)
            #expect(t.waitFor("terminal too small"), "\(t.capture())")
            try t.resize(width: 100, height: 30)
            #expect(t.waitFor("Settings ("), "\(t.capture())")
            // Colour is on by default.
            #expect(Self.colourCodes(t.capture(escapes: true)) > 0, "no colour in: \(t.capture(escapes: true).prefix(400))")
            // q quits and the terminal is restored.
            #expect(t.quitFrontEnd("EXIT=0"), "\(t.capture())")
            // NO_COLOR: no colour at all, attributes only (the header is drawn in reverse video).
            try t.startFrontEnd(home: s.home("A"), prefix: "clear; NO_COLOR=1 ", marker: "EXIT2")
            #expect(t.waitFor("1 Files"), "\(t.capture())")
            let mono = t.capture(escapes: true)
            #expect(Self.colourCodes(mono) == 0 && mono.contains("\u{1B}[7m"), "\(mono.prefix(400))")
            #expect(t.quitFrontEnd("EXIT2=0"), "\(t.capture())")
            try t.send("stty -a | tr ' ' '\\n' | grep -x -e icanon -e echo | tr '\\n' ' '; echo STTY", "Enter")
            #expect(t.waitFor("icanon echo STTY"), "\(t.capture())")
        }

        /// #24 §2 at 80×24, as a person uses it: dotfiles hidden, find by name, sort, marks with
        /// a bulk fetch and a bulk evict, the details pane, and a restore from the Trash view.
        @Test func everydayKeysAt80x24() async throws {
            guard TmuxSession.available else { Issue.record("tmux is not installed"); return }
            let s = try Setup()
            defer { s.teardown() }
            try s.login("A", extra: ["--download", "on-demand"]); try s.login("B")
            try s.write("B", "Documents/alpha.txt", "a")
            try s.write("B", "Documents/beta.txt", String(repeating: "b", count: 5000))
            try s.write("B", "Documents/gamma.md", "ggg")
            try s.write("B", "Documents/.hidden.txt", "dot")
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            // The editor: a script that appends a line (it gets the terminal, then gives it back).
            let editor = s.dir.url.appendingPathComponent("editor.sh")
            // The settings document (`E` in Settings) gets a TOML line instead, and loses `old`.
            // It also notes what it was handed open: none of the front end's connections.
            let handed = s.dir.url.appendingPathComponent("editor-fds.txt")
            try "#!/bin/sh\nls -l /proc/$$/fd > '\(handed.path)' 2>&1\ncase \"$1\" in *.toml) sed -i '/^\"old\" = /d' \"$1\"; echo 'fromEditor = [\"yes\", 2]' >> \"$1\";; *) echo 'edited in the editor' >> \"$1\";; esac\n"
                .write(to: editor, atomically: true, encoding: .utf8)
            chmod(editor.path, 0o755)
            #expect(try s.ubiq("A", ["kv", "set", "old", "gone soon"]).0 == 0 && s.ubiq("A", ["kv", "set", "keep", "7", "--type", "int"]).0 == 0)
            let t = try TmuxSession(width: 80, height: 24, environment: ["EDITOR": editor.path, "VISUAL": editor.path])
            defer { t.kill() }
            try t.startFrontEnd(home: s.home("A"))
            #expect(t.waitFor("Documents/"), "\(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor { $0.contains("alpha.txt") && $0.contains("gamma.md") && $0.contains("1 hidden") }, "\(t.capture())")

            #expect(!t.capture().contains(".hidden.txt") && t.capture().contains("? help") && t.capture().contains("q quit"))
            // Find by name (any case), then Esc.
            try t.send("/")
            try t.type("GAM")
            try t.send("Enter")
            #expect(t.waitFor { $0.contains("find: GAM (1 of 1)") && !$0.contains("alpha.txt") }, "\(t.capture())")
            try t.send("Escape")
            #expect(t.waitFor("alpha.txt"), "\(t.capture())")
            // Sort by size, largest first: beta.txt on top.
            try t.send("s", "s", "s", "s")
            #expect(t.waitFor { $0.contains("by size ↓") }, "\(t.capture())")
            let rows = t.capture().split(separator: "\n").filter { $0.contains(".txt") || $0.contains(".md") }
            #expect(rows.first?.contains("beta.txt") == true, "\(rows)")
            // Mark beta and gamma (cloud only here), fetch both at once.
            try t.send("g", "Space", "Space")
            #expect(t.waitFor("2 marked"), "\(t.capture())")
            try t.send("f")
            #expect(await eventually { s.read("A", "Documents/beta.txt")?.count == 5000 && s.read("A", "Documents/gamma.md") == "ggg" })
            #expect(s.read("A", "Documents/alpha.txt") == nil, "only the marked ones")
            // The details pane of the selected row.
            try t.send("g", "i")
            #expect(t.waitFor { $0.contains("Details") && $0.contains("Documents/beta.txt") && $0.contains("5000 bytes") }, "\(t.capture())")
            try t.send("i")
            // Evict both again with the marks.
            try t.send("g", "Space", "Space", "E")
            #expect(await eventually { s.read("A", "Documents/beta.txt") == nil && s.read("A", "Documents/gamma.md") == nil }, "\(t.capture())")
            // B deletes alpha; A restores it from the Trash view.
            #expect(try s.ubiq("B", ["rm", "--yes", "Documents/alpha.txt"]).0 == 0)
            try t.send("4")
            #expect(t.waitFor("Documents/alpha.txt"), "\(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor("Restore Documents/alpha.txt"), "\(t.capture())")
            try t.send("y")
            #expect(t.waitFor("restored Documents/alpha.txt"), "\(t.capture())")
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            #expect(s.read("B", "Documents/alpha.txt") == "a")
            // e on the restored file (only in the cloud here): fetched, edited in $EDITOR (which
            // gets the terminal and gives it back), and the change reaches B.
            try t.send("1", "/")
            try t.type("alpha")
            try t.send("Enter")
            #expect(t.waitFor("find: alpha (1 of 1)"), "\(t.capture())")
            try t.send("e")
            #expect(t.waitFor("edited alpha.txt"), "\(t.capture())")
            #expect(s.read("A", "Documents/alpha.txt") == "aedited in the editor\n")
            let fds = (try? String(contentsOf: handed, encoding: .utf8)) ?? ""
            #expect(fds.contains("/proc/") || fds.contains("->") , "the editor listed its files: \(fds)")
            #expect(!fds.contains("socket:"), "the editor holds none of the front end's sockets: \(fds)")
            #expect(await eventually { _ = try? s.ubiq("B", ["sync"]); return s.read("B", "Documents/alpha.txt") == "aedited in the editor\n" })
            try t.send("Escape")
            // y copies the selected file's path (OSC 52; tmux keeps it as a paste buffer).
            try t.acceptClipboard()
            try t.send("y")
            #expect(await eventually { t.pasteBuffer().hasSuffix("/Documents/alpha.txt") }, "\(t.pasteBuffer())")
            // Ctrl-Z stops it like any program; fg brings it back, redrawn.
            try t.send("C-z")
            #expect(t.waitFor { !$0.contains("1 Files") }, "\(t.capture())")
            try t.send("fg", "Enter")
            #expect(t.waitFor("1 Files"), "\(t.capture())")
            // E in Settings: every key as TOML in $EDITOR; what it changed is saved in one write
            // (a key added, one removed, the rest untouched), and B gets it.
            try t.send("3")
            #expect(t.waitFor { $0.contains("old") && $0.contains("keep") }, "\(t.capture())")
            try t.send("E")
            #expect(t.waitFor("saved 2 settings: fromEditor, old"), "\(t.capture())")
            let (ks, kout, _) = try s.ubiq("A", ["kv", "ls"])
            #expect(ks == 0 && kout.contains("fromEditor") && kout.contains("keep") && !kout.contains("old"), "\(kout)")
            #expect(await eventually { (try? s.ubiq("B", ["kv", "get", "fromEditor"]).1.contains("yes")) == true })
            // z undoes that write: `old` is back, `fromEditor` gone (one more write).
            try t.send("z")
            #expect(t.waitFor("undid: saved 2 settings"), "\(t.capture())")
            let (us, uout, _) = try s.ubiq("A", ["kv", "ls"])
            #expect(us == 0 && uout.contains("old") && !uout.contains("fromEditor") && uout.contains("keep"), "\(uout)")
            try t.send("1")
            // :theme switches live: mono draws no colour at all.
            #expect(Self.colourCodes(t.capture(escapes: true)) > 0)
            try t.send(":")
            try t.type("theme mono")
            try t.send("Enter")
            #expect(t.waitFor("theme mono"), "\(t.capture())")
            #expect(t.waitFor(timeout: 10) { _ in Self.colourCodes(t.capture(escapes: true)) == 0 }, "\(t.capture(escapes: true).prefix(300))")
            // q quits (the shell ran the list's echo when the job stopped; fg's status is the job's).
            #expect(t.quitFrontEnd { !$0.contains("1 Files") }, "\(t.capture())")  // the terminal is the shell's again
            try t.send("echo AFTER=$?", "Enter")
            #expect(t.waitFor("AFTER=0"), "\(t.capture())")
        }

        /// #24 §2 conflicts at 80×24: keep both on one document, a three-way merge through
        /// `$EDITOR` on another; the other device gets both results.
        @Test func conflictsKeptBothAndMergedAt80x24() async throws {
            guard TmuxSession.available else { Issue.record("tmux is not installed"); return }
            let s = try Setup()
            defer { s.teardown() }
            try s.login("A"); try s.login("B")
            try s.write("B", "Documents/keep.txt", "kept\n")
            try s.write("B", "Documents/merge.txt", "one\ntwo\nthree\nfour\n")
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            #expect(try s.ubiq("A", ["sync"]).0 == 0)
            try s.write("A", "Documents/keep.txt", "kept by A\n")
            try s.write("A", "Documents/merge.txt", "ONE by A\ntwo\nthree\nfour\n")
            #expect(try s.ubiq("A", ["sync"]).0 == 0)
            try s.write("B", "Documents/keep.txt", "kept by B\n")
            try s.write("B", "Documents/merge.txt", "one\ntwo\nthree\nFOUR by B\n")
            _ = try s.ubiq("B", ["sync"])
            // The editor: a script that adds a line to what it is given.
            let editor = s.dir.url.appendingPathComponent("editor.sh")
            try "#!/bin/sh\necho 'checked in the editor' >> \"$1\"\n".write(to: editor, atomically: true, encoding: .utf8)
            chmod(editor.path, 0o755)
            // xdg-open: a script that keeps what it was given to open (and its name).
            let bin = s.dir.url.appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            let opened = s.dir.url.appendingPathComponent("opened")
            try "#!/bin/sh\ncp \"$1\" '\(opened.path).tmp' && basename \"$1\" > '\(opened.path).name' && mv '\(opened.path).tmp' '\(opened.path)'\n"
                .write(to: bin.appendingPathComponent("xdg-open"), atomically: true, encoding: .utf8)
            chmod(bin.appendingPathComponent("xdg-open").path, 0o755)
            let path = "\(bin.path):" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            let t = try TmuxSession(width: 80, height: 24, environment: ["EDITOR": editor.path, "VISUAL": editor.path, "PATH": path])
            defer { t.kill() }
            try t.startFrontEnd(home: s.home("A"))
            #expect(t.waitFor("Documents/"), "\(t.capture())")
            try t.send("2")
            #expect(t.waitFor { $0.contains("keep.txt") && $0.contains("merge.txt") }, "\(t.capture())")
            // keep.txt: its versions; the conflict version's details (i), then opened outside (o).
            try t.send("g", "Enter")
            #expect(t.waitFor("Versions of Documents/keep.txt"), "\(t.capture())")
            try t.send("g", "j", "i")
            #expect(t.waitFor { $0.contains("Details: conflict") && $0.contains("hash  ") && $0.contains("based on") }, "\(t.capture())")
            try t.send("o")
            #expect(t.waitFor("opening keep (version from B"), "\(t.capture())")
            #expect(await eventually { (try? String(contentsOf: opened, encoding: .utf8)) == "kept by B\n" }, "xdg-open got B's version: \(t.capture())")
            let openedName = (try? String(contentsOf: URL(fileURLWithPath: opened.path + ".name"), encoding: .utf8)) ?? ""
            #expect(openedName.hasPrefix("keep (version from B ") && openedName.hasSuffix(").txt\n"), "\(openedName)")
            #expect(s.read("A", "Documents/keep.txt") == "kept by A\n", "opening a version changes nothing")
            // b, y — B's version becomes a document beside it.
            try t.send("i", "b")
            #expect(t.waitFor("Keep both?"), "\(t.capture())")
            try t.send("y")
            #expect(t.waitFor("kept both"), "\(t.capture())")
            // merge.txt: its versions, m — merged, the editor adds its line, kept.
            #expect(t.waitFor { $0.contains("merge.txt") && !$0.contains("keep.txt") }, "\(t.capture())")
            try t.send("g", "Enter")
            #expect(t.waitFor("Versions of Documents/merge.txt"), "\(t.capture())")
            try t.send("m")
            #expect(t.waitFor("merged merge.txt"), "\(t.capture())")
            let merged = "ONE by A\ntwo\nthree\nFOUR by B\nchecked in the editor\n"
            #expect(await eventually { s.read("A", "Documents/merge.txt") == merged }, "\(s.read("A", "Documents/merge.txt") ?? "-")")
            #expect(await eventually { _ = try? s.ubiq("B", ["sync"]); return s.read("B", "Documents/merge.txt") == merged })
            let names = (try? FileManager.default.contentsOfDirectory(atPath: s.file("B", "Documents").path)) ?? []
            #expect(s.read("B", "Documents/keep.txt") == "kept by A\n" && names.contains { $0.hasPrefix("keep (conflict from B ") }, "\(names)")
            let status = try JSONSerialization.jsonObject(with: Data(try s.ubiq("B", ["status", "--json"]).1.utf8)) as? [String: Any]
            #expect(status?["conflicts"] as? Int == 0)
            #expect(t.quitFrontEnd("EXIT=0"), "\(t.capture())")
        }

        /// #24's later keys at 80×24, as a person uses them: a prompt edited like readline, `p`
        /// pins a cloud-only file (fetched, marked, and so on the next version), `D` then `z`
        /// (the delete taken back from the trash), `r` then `z` (renamed back), and a new
        /// setting whose type and value are picked with the arrow keys.
        @Test func laterKeysAt80x24() async throws {
            guard TmuxSession.available else { Issue.record("tmux is not installed"); return }
            let s = try Setup()
            defer { s.teardown() }
            try s.login("A", extra: ["--download", "on-demand"]); try s.login("B")
            try s.write("B", "Documents/alpha.txt", "a")
            try s.write("B", "Documents/beta.txt", "b")
            try s.write("B", "Documents/gamma.md", "g")
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            let t = try TmuxSession(width: 80, height: 24)
            defer { t.kill() }
            try t.startFrontEnd(home: s.home("A"))
            #expect(t.waitFor("Documents/"), "\(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor { $0.contains("alpha.txt") && $0.contains("gamma.md") }, "\(t.capture())")
            // A prompt edits like readline: "ph", Home, "al" before it → "alph".
            try t.send("/")
            try t.type("ph")
            try t.send("Home")
            try t.type("al")
            try t.send("Enter")
            #expect(t.waitFor { $0.contains("find: alph (1 of 1)") && !$0.contains("beta.txt") }, "\(t.capture())")
            // p pins it: fetched on this on-demand device, marked, listed as pinned.
            try t.send("p")
            #expect(await eventually { s.read("A", "Documents/alpha.txt") == "a" }, "\(t.capture())")
            #expect(t.waitFor { $0.contains("pinned") }, "\(t.capture())")
            #expect(try s.ubiq("A", ["ls"]).1.contains("Documents/alpha.txt  [pinned]"))
            // A new version from B comes down by itself (pinned: kept on this device).
            try s.write("B", "Documents/alpha.txt", "a2")
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            #expect(await eventually { s.read("A", "Documents/alpha.txt") == "a2" })
            try t.send("Escape")
            #expect(t.waitFor("beta.txt"), "\(t.capture())")
            // D deletes gamma everywhere; z takes it back (restored from the trash).
            try t.send("G", "D")
            #expect(t.waitFor("Delete"), "\(t.capture())")
            try t.send("y")
            #expect(await eventually { _ = try? s.ubiq("B", ["sync"]); return s.read("B", "Documents/gamma.md") == nil }, "\(t.capture())")
            try t.send("z")
            #expect(await eventually { _ = try? s.ubiq("B", ["sync"]); return s.read("B", "Documents/gamma.md") == "g" }, "\(t.capture())")
            // r renames beta; z renames it back.
            #expect(t.waitFor("gamma.md"), "\(t.capture())")
            try t.send("/")
            try t.type("beta")
            try t.send("Enter")
            #expect(t.waitFor("find: beta (1 of 1)"), "\(t.capture())")
            try t.send("r", "C-u")
            try t.type("bravo.txt")
            try t.send("Enter")
            #expect(await eventually { _ = try? s.ubiq("B", ["sync"]); return s.read("B", "Documents/bravo.txt") == "b" }, "\(t.capture())")
            try t.send("Escape")
            #expect(t.waitFor("bravo.txt"), "\(t.capture())")
            try t.send("z")
            #expect(await eventually { _ = try? s.ubiq("B", ["sync"]); return s.read("B", "Documents/beta.txt") == "b" && s.read("B", "Documents/bravo.txt") == nil },
                    "\(t.capture())")
            // Settings: a new key whose type (bool) and value (false) are picked with the arrows.
            try t.send("3", "a")
            try t.type("sound")
            try t.send("Enter")
            #expect(t.waitFor("↑↓ picks"), "\(t.capture())")
            try t.send("Down", "Down", "Down")
            #expect(t.waitFor { $0.contains("bool") }, "\(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor("true"), "\(t.capture())")
            try t.send("Down", "Enter")
            #expect(await eventually { (try? s.ubiq("B", ["kv", "get", "sound"]).1.contains("false")) == true })
            #expect(t.quitFrontEnd("EXIT=0"), "\(t.capture())")
        }

        /// The README's first command: with nothing set up, documents arrive, change, conflict and
        /// settings change live; quitting removes everything the demo made.
        @Test func demoRunsFromNothingAndCleansUp() async throws {
            guard TmuxSession.available else { Issue.record("tmux is not installed"); return }
            let tmp = try TempDirectory("ubiq-demo-test")
            defer { tmp.remove() }
            let t = try TmuxSession(width: 100, height: 30, environment: ["TMPDIR": tmp.url.path])
            defer { t.kill() }
            try t.send("\(ChildProcess.ubiqBinary()) demo --pace 1; echo EXIT=$?", "Enter")
            // #24 defect 12: seconds of blank screen before the first frame; it says so now.
            #expect(t.waitFor("ubiq demo: starting", timeout: 5), "\(t.capture())")
            #expect(t.waitFor("Documents/"), "\(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor("Welcome.txt") && t.waitFor("From the desktop.txt"), "\(t.capture())")
            #expect(t.waitFor("Conflicts (1)", timeout: 60), "the second device makes a conflict: \(t.capture())")
            try t.send("3")
            #expect(t.waitFor { $0.contains("fontSize") && $0.contains("16") }, "\(t.capture())")
            let made = (try? FileManager.default.contentsOfDirectory(atPath: tmp.url.path)) ?? []
            #expect(made.contains { $0.hasPrefix("ubiq-demo-") }, "the demo works in a temporary folder")
            #expect(t.quitFrontEnd("EXIT=0", timeout: 30), "\(t.capture())")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: tmp.url.path)) ?? []
            #expect(!left.contains { $0.hasPrefix("ubiq-demo-") }, "left behind: \(left)")
        }

        /// With a daemon running for the home, the front end attaches to it through its socket.
        @Test func attachesToARunningDaemon() async throws {
            guard TmuxSession.available else { Issue.record("tmux is not installed"); return }
            let s = try Setup()
            defer { s.teardown() }
            try s.login("A"); try s.login("B")
            try s.write("B", "Documents/one.txt", "one")
            try s.write("B", "Documents/two.txt", "two")
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            let daemon = try ChildProcess(ChildProcess.ubiqBinary(), ["daemon", "--home", s.home("A")])
            defer { daemon.signal(SIGTERM); daemon.wait(timeout: 10) }
            #expect(daemon.waitForOutput(timeout: 60) { $0.contains("syncing") } != nil)
            let t = try TmuxSession(width: 100, height: 30)
            defer { t.kill() }
            try t.startFrontEnd(home: s.home("A"))
            #expect(t.waitFor("Documents/"), "\(t.capture())")
            try t.send("Enter")
            #expect(t.waitFor("two.txt"), "\(t.capture())")
            try s.write("B", "Documents/three.txt", "three")
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            #expect(t.waitFor("three.txt"), "a file from B appears live through the daemon: \(t.capture())")
            // Delete one.txt from the front end: asks, then it is gone everywhere.
            try t.send("g")
            #expect(t.waitFor { $0.contains("one.txt") })
            try t.send("D")
            #expect(t.waitFor("from all devices"), "\(t.capture())")
            try t.send("y")
            #expect(t.waitFor("deleted one.txt"), "\(t.capture())")
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            #expect(s.read("B", "Documents/one.txt") == nil)
            try t.send("3")
            #expect(try s.ubiq("B", ["kv", "set", "mode", "focus"]).0 == 0)
            #expect(t.waitFor { $0.contains("mode") && $0.contains("focus") }, "\(t.capture())")
            #expect(t.quitFrontEnd("EXIT=0"), "\(t.capture())")
            // The daemon keeps syncing after the front end leaves.
            let (st, status, _) = try s.ubiq("A", ["status", "--json"])
            #expect(st == 0 && status.contains("\"online\""), "\(status)")
        }
    }
}
