import Foundation
import Testing
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
import UbiqProtocol
@testable import UbiqTUI

/// The controller as plain state: keys in, state and effects out.
@Suite("Controller")
struct ControllerTests {
    func press(_ s: inout AppState, _ keys: [Key]) -> [Effect] { keys.flatMap { s.handle($0) } }

    @Test func browseFoldersAndMove() {
        var s = Fixtures.state(folder: nil)
        #expect(s.files.rows.map(\.item.name) == ["Documents"])
        _ = press(&s, [.enter])
        #expect(s.files.folder?.string == "Documents" && s.files.rows.first?.item.name == "Reports")
        _ = press(&s, [.char("j"), .char("j"), .down, .char("k")])
        #expect(s.files.cursor.index == 2)
        _ = press(&s, [.char("G")])
        #expect(s.files.cursor.index == s.files.rows.count - 1)
        _ = press(&s, [.char("h")])
        #expect(s.files.folder == nil && s.files.selected?.item.name == "Documents", "back to the parent with the folder selected")
        _ = press(&s, [.char("F")])
        #expect(s.files.rows.allSatisfy { $0.item.kind == .file } && s.files.rows.count == 10)
    }

    /// #24 §2: prompts edit like readline — ←/→, Home/End, Ctrl-A/E move the caret, typing
    /// inserts at it, Backspace/Delete, Ctrl-U (to the start) and Ctrl-W (a word) delete — and
    /// a predicate error marks its column in the line.
    @Test func promptsEditLikeReadlineAndMarkAnErrorsColumn() {
        var s = Fixtures.state()
        _ = press(&s, [.char("/")] + Key.typing("hello world"))
        _ = press(&s, Array(repeating: .left, count: 5) + Key.typing("big "))
        #expect(s.prompt?.text == "hello big world" && s.prompt?.caret == 10)
        _ = press(&s, [.ctrlA] + Key.typing(">") + [.end, .ctrlW])
        #expect(s.prompt?.text == ">hello big " && s.prompt?.back == 0)
        _ = press(&s, [.home, .delete, .right, .right, .backspace])
        #expect(s.prompt?.text == "hllo big " && s.prompt?.caret == 1)
        _ = press(&s, [.right, .right, .ctrlU])
        #expect(s.prompt?.text == "o big " && s.prompt?.caret == 0)
        _ = press(&s, [.ctrlE, .left, .left, .left, .left, .left, .left, .left, .left, .right])
        #expect(s.prompt?.caret == 1, "the caret stops at the ends")
        // A predicate error: the column is marked on the line.
        _ = press(&s, [.ctrlE, .ctrlU] + Key.typing("size > 'x'") + [.enter])
        let column = try! #require(s.prompt?.errorColumn)
        let screen = Renderer.render(s, width: 80, height: 24, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0))
        let line = screen.lines.count - 1
        let marked = (0..<80).filter { screen[$0, line].role == "ui.flash.error" }
        #expect(marked.count == 1, "one character is marked: \(screen.lines[line])")
        let start = screen.lines[line].distance(from: screen.lines[line].startIndex, to: screen.lines[line].range(of: "size", options: .backwards)!.lowerBound)
        #expect(marked.first == start + column - 1, "column \(column) of \(screen.lines[line])")
    }

    @Test func filterTakesThePredicateLanguageAndNamesErrors() {
        var s = Fixtures.state()
        _ = press(&s, [.char("/")] + Key.typing("size > 1MB AND name LIKE '*.mov'") + [.enter])
        #expect(s.prompt == nil && s.files.rows.map(\.item.name) == ["downloading.mov"])
        _ = press(&s, [.char("/"), .ctrlU] + Key.typing("size > > 3") + [.enter])
        #expect(s.prompt?.error?.contains("column 8") == true, "\(String(describing: s.prompt?.error))")
        _ = press(&s, [.escape])
        #expect(s.prompt == nil && s.files.filter == nil && s.files.rows.count > 1, "Esc clears the filter")
        // #24 §2 find: plain text finds names containing it, ignoring case; `*` and `?` glob.
        _ = press(&s, [.char("/"), .ctrlU] + Key.typing("PLAN") + [.enter])
        #expect(s.prompt == nil && s.files.rows.map(\.item.name) == ["plan.txt"], "\(s.files.rows.map(\.item.name))")
        _ = press(&s, [.char("/"), .ctrlU] + Key.typing("*.MOV") + [.enter])
        #expect(s.files.rows.map(\.item.name) == ["downloading.mov"])
        _ = press(&s, [.char("/"), .ctrlU] + Key.typing("no such name") + [.enter])
        #expect(s.prompt == nil && s.files.rows.isEmpty)
        #expect(FilesState.looksLikePredicate("size > 3") && FilesState.looksLikePredicate("name like x") && !FilesState.looksLikePredicate("my report 2024"))
    }

    @Test func actionsAskBeforeDeletingAndDefaultToNo() {
        var s = Fixtures.state()
        let plan = s.files.rows.firstIndex { $0.item.name == "plan.txt" }!
        s.files.cursor.index = plan
        #expect(press(&s, [.char("D")]).isEmpty)
        #expect(s.confirm?.message.contains("from all devices") == true)
        #expect(press(&s, [.char("n")]).isEmpty && s.confirm == nil)
        _ = press(&s, [.char("D")])
        #expect(press(&s, [.enter]).isEmpty, "Enter is not yes")
        _ = press(&s, [.char("D")])
        #expect(press(&s, [.char("y")]) == [.delete(try! RelativePath(validating: "Documents/plan.txt"))])
        #expect(press(&s, [.char("f")]) == [.download(try! RelativePath(validating: "Documents/plan.txt"))])
        // Evict is refused at once for content not uploaded yet.
        s.files.cursor.index = s.files.rows.firstIndex { $0.item.name == "waiting.txt" }!
        #expect(press(&s, [.char("E")]).isEmpty && s.flash?.level == .warn)
        s.files.cursor.index = s.files.rows.firstIndex { $0.item.name == "current.txt" }!
        #expect(press(&s, [.char("E")]) == [.evict(try! RelativePath(validating: "Documents/current.txt"))])
        // u: the selected item, or every marked one, is tried again now.
        #expect(press(&s, [.char("u")]) == [.retry([try! RelativePath(validating: "Documents/current.txt")])])
        s.files.cursor.index = s.files.rows.firstIndex { $0.item.name == "plan.txt" }!
        let marked = press(&s, [.char(" "), .char(" "), .char("u")])
        #expect(marked.count == 1 && { if case .retry(let ps) = marked[0] { ps.count == 2 } else { false } }(), "\(marked)")
        #expect(s.files.marked.isEmpty, "the marks are used up")
    }

    @Test func pauseTogglesWithWhatTheEngineSays() {
        var s = Fixtures.state()
        #expect(press(&s, [.char("P")]) == [.pause(true)])
        var st = EngineStatus(state: .online, idle: false, account: "alice", server: "s", device: "laptop", container: "c")
        st.paused = true
        _ = s.apply(.status(st, throughput: 0))
        #expect(s.status.paused && s.status.state == "paused", "the header says paused")
        #expect(press(&s, [.char("P")]) == [.pause(false)])
        st.paused = nil
        _ = s.apply(.status(st, throughput: 0))
        #expect(!s.status.paused && s.status.state == "online")
    }

    @Test func resolvingAConflictIsAConfirmedChoiceOfAVersion() {
        var s = Fixtures.state(view: .conflicts)
        #expect(press(&s, [.enter]) == [.loadVersions(try! RelativePath(validating: "Documents/plan.txt"))])
        let mk = { (n: Int, dev: String) in
            VersionRecord(id: VersionID(uuid: UUID()), state: .current, size: n, hash: ContentHash.of([UInt8(n)]), modified: Fixtures.t0,
                          committed: Fixtures.t0, device: DeviceID(uuid: UUID()), deviceName: dev, uploaded: true)
        }
        let cur = mk(1, "laptop"), other = mk(2, "phone")
        let item = ItemRecord(id: Fixtures.id(7), path: try! RelativePath(validating: "Documents/plan.txt"), kind: .file, current: cur,
                              conflictCount: 1, deletedAt: nil, changeSeq: 1)
        let fx = s.apply(.versions(item.path, VersionsResponse(item: item, current: cur, conflicts: [other], others: [])))
        #expect(s.versions?.selected?.record.deviceName == "phone", "the first conflict version is selected")
        #expect(fx == [.loadPreview(item.path, other, current: cur)])
        _ = press(&s, [.enter])
        #expect(s.confirm?.message.contains("phone") == true && s.confirm?.message.contains("every device") == true)
        #expect(press(&s, [.char("y")]) == [.resolve(item.path, other.id, label: AppState.describe(other))])
        // b: keep both, after y/N (the default keeps nothing).
        _ = press(&s, [.char("b")])
        #expect(s.confirm?.message.contains("Keep both") == true && s.confirm?.message.contains("conflict from DEVICE DATE") == true)
        #expect(press(&s, [.char("n")]).isEmpty)
        _ = press(&s, [.char("b")])
        #expect(press(&s, [.char("y")]) == [.keepBoth(item.path)])
        // m: merge the selected conflict version in the editor; on the current row, the only one.
        #expect(press(&s, [.char("m")]) == [.merge(item.path, conflict: other.id)])
        _ = press(&s, [.char("k")])
        #expect(s.versions?.selected?.kind == .current)
        #expect(press(&s, [.char("m")]) == [.merge(item.path, conflict: other.id)])
        _ = press(&s, [.char("q")])
        #expect(s.versions == nil && !s.quit, "q closes the versions view first")
        _ = press(&s, [.char("q")])
        #expect(s.quit)
    }

    @Test func mergeWithoutAConflictSaysSo() {
        var s = Fixtures.state(view: .conflicts)
        _ = press(&s, [.enter])
        let cur = VersionRecord(id: VersionID(uuid: UUID()), state: .current, size: 1, hash: ContentHash.of([1]), modified: Fixtures.t0,
                                committed: Fixtures.t0, device: DeviceID(uuid: UUID()), deviceName: "laptop", uploaded: true)
        let item = ItemRecord(id: Fixtures.id(7), path: try! RelativePath(validating: "Documents/plan.txt"), kind: .file, current: cur,
                              conflictCount: 0, deletedAt: nil, changeSeq: 1)
        _ = s.apply(.versions(item.path, VersionsResponse(item: item, current: cur, conflicts: [], others: [])))
        #expect(press(&s, [.char("m")]).isEmpty)
        #expect(s.flash?.text == "no conflict to merge")
    }

    /// `m` pressed while the versions still load (a busy machine, keys typed ahead) is acted on
    /// when they arrive — before, it found no rows and said "no conflict to merge".
    @Test func aKeyTypedWhileTheVersionsLoadIsActedOnWhenTheyArrive() {
        var s = Fixtures.state(view: .conflicts)
        _ = press(&s, [.enter])
        let cur = VersionRecord(id: VersionID(uuid: UUID()), state: .current, size: 1, hash: ContentHash.of([1]), modified: Fixtures.t0,
                                committed: Fixtures.t0, device: DeviceID(uuid: UUID()), deviceName: "laptop", uploaded: true)
        let other = VersionRecord(id: VersionID(uuid: UUID()), state: .conflict, size: 2, hash: ContentHash.of([2]), modified: Fixtures.t0,
                                  committed: Fixtures.t0, device: DeviceID(uuid: UUID()), deviceName: "phone", uploaded: true)
        let item = ItemRecord(id: Fixtures.id(7), path: try! RelativePath(validating: "Documents/plan.txt"), kind: .file, current: cur,
                              conflictCount: 1, deletedAt: nil, changeSeq: 1)
        s.versions = VersionsState(path: item.path)
        #expect(press(&s, [.char("m")]).isEmpty && s.flash == nil, "nothing yet, and no wrong message")
        let fx = s.apply(.versions(item.path, VersionsResponse(item: item, current: cur, conflicts: [other], others: [])))
        #expect(fx.contains(.merge(item.path, conflict: other.id)), "\(fx)")
        #expect(s.versions?.typedAhead == nil)
        // Loaded: a key acts at once, and is not kept.
        #expect(press(&s, [.char("m")]) == [.merge(item.path, conflict: other.id)])
    }

    @Test func spaceFlipsABoolSettingAndEditsAnyOther() {
        var s = Fixtures.state(view: .settings)
        let dev = DeviceID(uuid: UUID())
        let stamp = HLCTimestamp(wallMillis: 1, counter: 0)
        _ = s.apply(.settings([KVEntry(key: "darkMode", value: .bool(true), stamp: stamp, device: dev),
                               KVEntry(key: "fontSize", value: .int(14), stamp: stamp, device: dev)], keys: 2, bytes: 20))
        s.settings.cursor.index = s.settings.entries.firstIndex { $0.key == "darkMode" }!
        #expect(press(&s, [.char(" ")]) == [.setValue(key: "darkMode", value: .bool(false))])
        s.settings.cursor.index = s.settings.entries.firstIndex { $0.key == "fontSize" }!
        #expect(press(&s, [.char(" ")]).isEmpty && s.prompt?.label.contains("fontSize") == true, "not a bool: the editor opens")
    }

    /// Settings `r` renames a key in one atomic write (refusing a taken or invalid name), `i`
    /// says which device changed it last and when, and a wide screen shows that per row.
    @Test func settingsRenameAndWhoChangedAKey() {
        TimeFormat.use(TimeZone(identifier: "UTC")!)
        var s = Fixtures.state(view: .settings)
        let phone = DeviceID(uuid: UUID()), laptop = DeviceID(uuid: UUID()), unknown = DeviceID(uuid: UUID())
        let at = HLCTimestamp(wallMillis: Int64(Fixtures.t0.timeIntervalSince1970 * 1000), counter: 0)
        _ = s.apply(.settings([KVEntry(key: "darkMode", value: .bool(true), stamp: at, device: phone),
                               KVEntry(key: "fontSize", value: .int(14), stamp: at, device: laptop),
                               KVEntry(key: "zoom", value: .double(1.5), stamp: at, device: unknown)], keys: 3, bytes: 30))
        let now = Date()
        _ = s.apply(.devices([DeviceInfo(id: phone, name: "phone", created: now, lastSeen: now, signedIn: true, current: false),
                              DeviceInfo(id: laptop, name: "laptop", created: now, lastSeen: now, signedIn: true, current: true)]))
        s.settings.cursor.index = 0
        _ = press(&s, [.char("i")])
        #expect(s.flash?.text == "darkMode: bool, changed by phone, 2026-11-18 11:06:40", "\(s.flash?.text ?? "")")
        s.settings.cursor.index = 1
        _ = press(&s, [.char("i")])
        #expect(s.flash?.text.contains("changed by this device") == true)
        // Wide: a column says it for every row (a device the server no longer lists by its ID).
        s.flash = nil
        let wide = Renderer.render(s, width: 120, height: 24, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0)).lines.joined(separator: "\n")
        #expect(wide.contains("changed by") && wide.contains("phone, 2026-11-18 11:06") && wide.contains("device \(unknown.description.prefix(8))"), "\(wide)")
        let narrow = Renderer.render(s, width: 80, height: 24, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0)).lines.joined(separator: "\n")
        #expect(!narrow.contains("changed by"))
        // Rename: a taken name and an invalid one are refused in the prompt; a free one is one write.
        s.settings.cursor.index = 1
        _ = press(&s, [.char("r"), .ctrlU] + Key.typing("zoom") + [.enter])
        #expect(s.prompt?.error?.contains("taken") == true)
        _ = press(&s, [.ctrlU] + Key.typing(String(repeating: "x", count: 65)) + [.enter])
        #expect(s.prompt?.error?.contains("1-64") == true)
        #expect(press(&s, [.ctrlU] + Key.typing("textSize") + [.enter]) == [.renameKey(from: "fontSize", to: "textSize", value: .int(14))])
        #expect(s.prompt == nil && s.settings.toSelect == "textSize")
        // z: the last write made here is put back (the app reports each write with what it replaced).
        _ = s.apply(.settingsWritten(previous: ["textSize": nil, "fontSize": .int(14)], what: "renamed fontSize to textSize"))
        #expect(press(&s, [.char("z")]) == [.undoSettings(["textSize": nil, "fontSize": .int(14)], what: "renamed fontSize to textSize")])
        #expect(press(&s, [.char("z")]).isEmpty && s.flash?.text == "nothing to undo")
    }

    @Test func settingsAddAndEditAreTypedAndDraftsSurviveRemoteChanges() {
        var s = Fixtures.state(view: .settings)
        let dev = DeviceID(uuid: UUID())
        _ = s.apply(.settings([KVEntry(key: "fontSize", value: .int(14), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: dev)], keys: 1, bytes: 16))
        _ = press(&s, [.char("a")] + Key.typing(String(repeating: "k", count: 65)) + [.enter])
        #expect(s.prompt?.error?.contains("1-64") == true)
        _ = press(&s, [.ctrlU] + Key.typing("volume") + [.enter, .ctrlU] + Key.typing("number") + [.enter])
        #expect(s.prompt?.error?.contains("type must be") == true)
        _ = press(&s, [.ctrlU] + Key.typing("int") + [.enter] + Key.typing("eleven") + [.enter])
        #expect(s.prompt?.error?.contains("not an integer") == true)
        #expect(press(&s, [.ctrlU] + Key.typing("11") + [.enter]) == [.setValue(key: "volume", value: .int(11))])
        // #24 defect 13: the new key is selected once the store lists it (the cursor stayed put).
        let listed = ["alpha", "fontSize", "volume", "zoom"].map { KVEntry(key: $0, value: .int(1), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: dev) }
        _ = s.apply(.settings(listed, keys: 4, bytes: 40))
        #expect(s.settings.selected?.key == "volume")
        _ = s.apply(.settings(listed, keys: 4, bytes: 40))
        _ = press(&s, [.char("k")])
        #expect(s.settings.selected?.key == "fontSize", "selected once, then the cursor is the user's")
        // Editing: the draft is kept when the key changes on another device.
        _ = press(&s, [.char("e"), .ctrlU] + Key.typing("20"))
        _ = s.apply(.settings([KVEntry(key: "fontSize", value: .int(99), stamp: HLCTimestamp(wallMillis: 2, counter: 0), device: dev)], keys: 1, bytes: 16))
        _ = s.apply(.settingsChanged(keys: ["fontSize"], reason: .serverChange, at: Date()))
        #expect(s.prompt?.text == "20" && s.prompt?.notice?.contains("another device") == true)
        // A write by another program on this device (`ubiq kv set`) is named as such.
        _ = s.apply(.settingsChanged(keys: ["fontSize"], reason: .localChange, at: Date()))
        #expect(s.prompt?.text == "20" && s.prompt?.notice?.contains("on this device (another program)") == true)
        #expect(press(&s, [.enter]) == [.setValue(key: "fontSize", value: .int(20))])
        _ = press(&s, [.char("D")])
        #expect(press(&s, [.char("y")]) == [.setValue(key: "fontSize", value: nil)])
    }

    /// A long typed or pasted value is taken whole (it was cut at 4,096 characters without a
    /// word); past a prompt's limit the rest is refused with a message, never dropped silently.
    @Test func longInputIsTakenWholeOrRefusedWithAMessage() {
        var s = Fixtures.state(view: .settings)
        _ = s.apply(.settings([], keys: 0, bytes: 0))
        let long = String(repeating: "é", count: 5_000)  // 10,000 bytes
        _ = press(&s, [.char("a")] + Key.typing("longValue") + [.enter, .enter] + Key.typing(long))  // type: string, the default
        #expect(s.prompt?.error == nil)
        #expect(press(&s, [.enter]) == [.setValue(key: "longValue", value: .string(long))])
        var f = Fixtures.state()
        _ = press(&f, [.char("/")] + Key.typing(String(repeating: "x", count: 4_100)))
        #expect(f.prompt?.text.utf8.count == 4_096)
        #expect(f.prompt?.error?.contains("too long") == true, "\(f.prompt?.error ?? "no message")")
    }

    /// Status-line messages go after a while (they stayed for minutes: `cancelled`, or a note
    /// about uploads long finished); errors stay longest; a new message starts its own time.
    @Test func statusLineMessagesExpire() {
        var s = Fixtures.state()
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        s.flash = Flash(text: "cancelled", level: .info)
        #expect(!s.expireTimed(now: t0) && s.flash != nil, "first seen now")
        #expect(!s.expireTimed(now: t0 + 4.9) && s.flash != nil)
        #expect(s.expireTimed(now: t0 + 5) && s.flash == nil)
        s.flash = Flash(text: "not saved", level: .error)
        _ = s.expireTimed(now: t0 + 6)
        #expect(!s.expireTimed(now: t0 + 16) && s.flash?.text == "not saved")
        s.flash = Flash(text: "saved volume", level: .info)  // replaces it: its own time
        _ = s.expireTimed(now: t0 + 17)
        #expect(!s.expireTimed(now: t0 + 21) && s.flash?.text == "saved volume")
        #expect(s.expireTimed(now: t0 + 22) && s.flash == nil)
        // A sticky message (a theme that could not be used) stays until a key is pressed; the
        // key still does its work.
        s.flash = Flash(text: "theme 'x': unknown colour", level: .warn, sticky: true)
        _ = s.expireTimed(now: t0 + 30)
        #expect(!s.expireTimed(now: t0 + 3_600) && s.flash?.sticky == true)
        _ = s.handle(.char("3"))
        #expect(s.flash == nil && s.view == .settings)
    }

    /// PgDn and PgUp move by what the list shows (less one row for context), not always 10.
    @Test func pageKeysMoveByTheWindowsHeight() {
        var s = Fixtures.state(view: .settings)
        let dev = DeviceID(uuid: UUID())
        let entries = (0..<100).map { KVEntry(key: String(format: "k%03d", $0), value: .int(Int64($0)), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: dev) }
        _ = s.apply(.settings(entries, keys: 100, bytes: 1_000))
        s.pageRows = Renderer.listRows(height: 40)
        _ = press(&s, [.pageDown])
        #expect(s.settings.cursor.index == 33, "a 40-row window shows 34 rows")
        s.pageRows = Renderer.listRows(height: 15)
        _ = press(&s, [.pageDown, .pageUp, .pageUp])
        #expect(s.settings.cursor.index == 33 + 8 - 16)
        // Ctrl-D / Ctrl-U move half as far (tig, lf).
        _ = press(&s, [.ctrlD])
        #expect(s.settings.cursor.index == 25 + 4)
        _ = press(&s, [.ctrlU, .ctrlU])
        #expect(s.settings.cursor.index == 25 + 4 - 8)
    }

    /// #24 §2: `/` in Settings finds keys by part of their name (any case); Esc shows all again;
    /// the size check before saving still counts every key, shown or not.
    @Test func settingsFindKeysByNameAndTheLimitsStillCountAll() {
        var s = Fixtures.state(view: .settings)
        let dev = DeviceID(uuid: UUID())
        let entries = ["fontSize", "fontName", "theme", "darkMode"].map { KVEntry(key: $0, value: .string("v"), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: dev) }
            + [KVEntry(key: "blob", value: .string(String(repeating: "x", count: 900_000)), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: dev)]
        _ = s.apply(.settings(entries, keys: 5, bytes: 900_100))
        _ = press(&s, [.char("/")] + Key.typing("FONT") + [.enter])
        #expect(s.settings.entries.map(\.key).sorted() == ["fontName", "fontSize"] && s.prompt == nil)
        let screen = Renderer.render(s, width: 80, height: 24, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0)).lines.joined(separator: "\n")
        #expect(screen.contains("/FONT (2 of 5)") && !screen.contains("darkMode"), "\(screen)")
        // Editing a shown key to 200 KB: refused, the hidden 900 KB key counts.
        s.settings.cursor.index = 0
        _ = press(&s, [.char("e"), .ctrlU])
        _ = press(&s, Key.typing(String(repeating: "y", count: 200_000)) + [.enter])
        #expect(s.prompt?.error != nil, "the store's limit counts the keys the filter hides")
        _ = press(&s, [.escape, .escape])
        #expect(s.settings.filter.isEmpty && s.settings.entries.count == 5)
        _ = press(&s, [.char("/")] + Key.typing("nothing") + [.enter])
        let empty = Renderer.render(s, width: 80, height: 24, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0)).lines.joined(separator: "\n")
        #expect(s.settings.entries.isEmpty && empty.contains("no key contains 'nothing'"), "\(empty)")
    }

    @Test func globalKeys() {
        var s = Fixtures.state()
        _ = press(&s, [.char("3")])
        #expect(s.view == .settings)
        _ = press(&s, [.char("?")])
        #expect(s.help)
        _ = press(&s, [.char("1")])
        #expect(s.help && s.view == .settings, "keys go to the help overlay while it is open")
        _ = press(&s, [.char("q")])
        #expect(!s.help && !s.quit)
        #expect(press(&s, [.char("R")]) == [.syncNow])
        #expect(press(&s, [.ctrlC]) == [.quit] && s.quit)
    }
}

/// #24 §2: sort (`s` then a field; the same again reverses), dotfiles (`.`), marks (`Space`,
/// `v`, acted on by `f`/`E`/`D`, cleared by `Esc`) and the details pane (`i`).
@Suite("Files: sort, dotfiles, marks, details")
struct FilesEverydayTests {
    func names(_ s: AppState) -> [String] { s.files.rows.map(\.item.name) }
    func press(_ s: inout AppState, _ keys: [Key]) -> [Effect] { keys.flatMap { s.handle($0) } }

    @Test func sortPicksAFieldAndTheSameAgainReverses() {
        var s = Fixtures.state()
        #expect(names(s).first == "Reports", "folders first")
        _ = press(&s, [.char("s"), .char("s")])
        #expect(s.files.sortKey == .size && !s.files.sortDescending)
        #expect(Array(names(s).dropFirst()) == ["party 🎉.md", "报告-2024年.pdf", "broken.bin", "current.txt", "plan.txt", "waiting.txt",
                                                   "uploading.zip", "cloud only.pdf", "downloading.mov"], "\(names(s))")
        _ = press(&s, [.char("s"), .char("s")])
        #expect(s.files.sortDescending && names(s)[1] == "downloading.mov" && names(s).first == "Reports", "\(names(s))")
        _ = press(&s, [.char("s"), .char("t")])
        #expect(names(s)[1] == "broken.bin" && names(s)[2] == "plan.txt", "errors, then conflicts first: \(names(s))")
        _ = press(&s, [.char("s"), .char("m")])
        #expect(names(s).last == "waiting.txt", "newest last: \(names(s))")
        // Esc after `s` keeps the sort; the next key is an ordinary key again.
        _ = press(&s, [.char("s"), .escape, .char("j")])
        #expect(s.files.sortKey == .modified && !s.files.choosingSort && s.files.cursor.index == 1)
        let screen = Renderer.render(s, width: 80, height: 24, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0))
        #expect(screen.lines[1].contains("by modified"), "\(screen.lines[1])")
    }

    @Test func dotfilesAreHiddenUntilAsked() {
        var s = Fixtures.state()
        var diff = QueryDiff()
        diff.added = [Fixtures.item(40, "Documents/.env"), Fixtures.item(41, "Documents/.git", kind: .folder, size: 0),
                      Fixtures.item(42, "Documents/.git/config")]
        s.files.apply(diff)
        #expect(!names(s).contains(".env") && s.files.hiddenCount == 2)
        var screen = Renderer.render(s, width: 80, height: 24, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0))
        #expect(screen.lines[1].contains("2 hidden"), "\(screen.lines[1])")
        _ = press(&s, [.char(".")])
        #expect(names(s).contains(".env") && names(s).contains(".git") && s.files.hiddenCount == 0)
        // The flat list leaves out what is inside dot-folders too, unless shown.
        _ = press(&s, [.char("."), .char("F")])
        #expect(!s.files.rows.contains { $0.item.path.string.contains("/.") })
        _ = press(&s, [.char(".")])
        #expect(s.files.rows.contains { $0.item.path.string == "Documents/.git/config" })
        screen = Renderer.render(s, width: 80, height: 24, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0))
        #expect(!screen.lines[1].contains("hidden"))
    }

    @Test func marksAreActedOnTogetherAndEscClearsThem() {
        var s = Fixtures.state()
        let at = { (n: String, s: AppState) in s.files.rows.firstIndex { $0.item.name == n }! }
        s.files.cursor.index = at("broken.bin", s)
        _ = press(&s, [.char(" ")])  // broken.bin marked, cursor on cloud only.pdf
        #expect(s.files.marked.count == 1 && s.files.selected?.item.name == "cloud only.pdf")
        s.files.cursor.index = at("downloading.mov", s)
        _ = press(&s, [.char("v")])  // broken.bin … downloading.mov
        #expect(s.files.markedItems.map(\.name) == ["broken.bin", "cloud only.pdf", "current.txt", "downloading.mov"])
        let screen = Renderer.render(s, width: 80, height: 24, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0))
        #expect(screen.lines[1].contains("4 marked"))
        let row = screen.lines.firstIndex { $0.contains("cloud only.pdf") }!
        #expect(screen[1, row].text == "▌" && screen[1, row].role == "ui.marked")
        #expect(press(&s, [.char("f")]) == ["broken.bin", "cloud only.pdf", "current.txt", "downloading.mov"].map { .download(try! RelativePath(validating: "Documents/\($0)")) })
        #expect(s.files.marked.isEmpty, "acting clears the marks")
        // Evict leaves what has changes not uploaded (broken.bin) and says so.
        s.files.cursor.index = at("broken.bin", s)
        _ = press(&s, [.char(" "), .char(" ")])
        #expect(press(&s, [.char("E")]) == [.evict(try! RelativePath(validating: "Documents/cloud only.pdf"))] && s.flash?.level == .warn)
        // Delete asks once for all of them; Esc clears marks before anything else.
        s.files.cursor.index = at("plan.txt", s)
        _ = press(&s, [.char(" "), .char(" ")])
        #expect(press(&s, [.char("D")]).isEmpty && s.confirm?.message.contains("2 marked items") == true)
        #expect(press(&s, [.char("y")]).count == 2)
        _ = press(&s, [.char(" "), .escape])
        #expect(s.files.marked.isEmpty && !s.quit)
    }

    /// `p` pins the selected item (or the marks) and unpins a pinned one; the row shows the
    /// pinned glyph beside the status and the details say what it means.
    @Test func pinTogglesAndThePinnedFlagShows() {
        var s = Fixtures.state()
        let path = { (n: String) in try! RelativePath(validating: "Documents/\(n)") }
        s.files.cursor.index = s.files.rows.firstIndex { $0.item.name == "cloud only.pdf" }!
        #expect(press(&s, [.char("p")]) == [.pin([path("cloud only.pdf")], true)] && s.flash?.text.contains("pinning") == true)
        // The engine answers with the flag set: the row and the details show it.
        var pinned = s.files.selected!.item
        pinned.pinned = true
        s.files.apply(QueryDiff(changed: [pinned]), now: Fixtures.t0)
        _ = press(&s, [.char("i")])
        let screen = Renderer.render(s, width: 80, height: 24, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0))
        let row = screen.lines.firstIndex { $0.contains("cloud only.pdf") }!
        #expect(screen[4, row].text == "●", "\(screen.lines[row])")
        #expect(screen.lines.joined().contains("pinned: kept on this device"))
        #expect(press(&s, [.char("p")]) == [.pin([path("cloud only.pdf")], false)], "again unpins")
        // Marks: the first marked item decides (cloud only.pdf is pinned: both are unpinned).
        s.files.cursor.index = s.files.rows.firstIndex { $0.item.name == "cloud only.pdf" }!
        _ = press(&s, [.char(" "), .char(" ")])
        #expect(press(&s, [.char("p")]) == [.pin([path("cloud only.pdf"), path("current.txt")], false)] && s.files.marked.isEmpty)
    }

    /// `X` cancels a download (the item stays in the cloud); an upload is not cancelled alone.
    @Test func cancelStopsDownloadsAndSaysWhyNotUploads() {
        var s = Fixtures.state()
        let at = { (n: String, s: AppState) in s.files.rows.firstIndex { $0.item.name == n }! }
        s.files.cursor.index = at("downloading.mov", s)
        #expect(press(&s, [.char("X")]) == [.cancelTransfers([try! RelativePath(validating: "Documents/downloading.mov")])])
        s.files.cursor.index = at("uploading.zip", s)
        #expect(press(&s, [.char("X")]).isEmpty && s.flash?.text.contains("P pauses all syncing") == true && s.flash?.level == .warn)
        s.files.cursor.index = at("current.txt", s)
        #expect(press(&s, [.char("X")]).isEmpty && s.flash?.text.contains("not being downloaded") == true)
    }

    /// `z` in Files takes back the last delete (restored from the trash) or rename made there,
    /// newest first; the app reports each with how to take it back.
    @Test func undoInFilesRestoresADeleteAndRenamesBack() {
        var s = Fixtures.state()
        let p = { (n: String) in try! RelativePath(validating: "Documents/\(n)") }
        #expect(press(&s, [.char("z")]).isEmpty && s.flash?.text == "nothing to undo")
        _ = s.apply(.filesDone("deleted plan.txt", undo: .deleted(p("plan.txt"))))
        _ = s.apply(.filesDone("renamed a.txt to b.txt", undo: .renamed(from: p("a.txt"), to: p("b.txt"))))
        #expect(s.flash?.text == "renamed a.txt to b.txt")
        #expect(press(&s, [.char("z")]) == [.renameBack(p("b.txt"), to: "a.txt")])
        #expect(press(&s, [.char("z")]) == [.restore(p("plan.txt"))])
        #expect(press(&s, [.char("z")]).isEmpty && s.filesUndo.isEmpty)
    }

    @Test func theDetailsPaneSaysWhatTheRowCannot() {
        var s = Fixtures.state()
        s.files.cursor.index = s.files.rows.firstIndex { $0.item.name == "broken.bin" }!
        _ = press(&s, [.char("i")])
        let screen = Renderer.render(s, width: 80, height: 24, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0))
        let text = screen.lines.joined(separator: "\n")
        #expect(text.contains("Details") && text.contains("Documents/broken.bin") && text.contains("1.2 KiB (1234 bytes)") && text.contains("storage full"), "\(text)")
        #expect(text.contains("waiting to upload"))
        #expect(Renderer.listRows(height: 24, s) == Renderer.listRows(height: 24) - 8, "paging follows the shorter list")
        _ = press(&s, [.char("i")])
        #expect(!Renderer.render(s, width: 80, height: 24, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0)).lines.joined().contains("Details"))
    }
}

/// #24 §2 the Trash view (`4`): every trashed item with its date and size; `Enter` restores
/// after `y/N`; emptying needs the word `empty` typed.
@Suite("Trash view")
struct TrashViewTests {
    init() { TimeFormat.use(TimeZone(identifier: "UTC")!) }
    func press(_ s: inout AppState, _ keys: [Key]) -> [Effect] { keys.flatMap { s.handle($0) } }

    static func trashed(_ n: Int, _ path: String, kind: ItemKind = .file, size: Int = 2048) -> ItemRecord {
        let version = kind == .file ? VersionRecord(id: VersionID(uuid: UUID()), state: .current, size: size, hash: ContentHash.of([UInt8(n)]), modified: Fixtures.t0,
                                                    committed: Fixtures.t0, device: DeviceID(uuid: UUID()), deviceName: "phone", uploaded: true) : nil
        return ItemRecord(id: Fixtures.id(100 + n), path: try! RelativePath(validating: path), kind: kind, current: version, conflictCount: 0,
                          deletedAt: Fixtures.t0.addingTimeInterval(Double(n) * 3600), changeSeq: Int64(n), created: Fixtures.t0)
    }

    @Test func restoreAsksAndEmptyingNeedsTheWordTyped() {
        var s = Fixtures.state()
        #expect(press(&s, [.char("4")]) == [.loadTrash] && s.view == .trash)
        // [ and ] step through the views, round the ends.
        #expect(press(&s, [.char("]")]).isEmpty && s.view == .files)
        #expect(press(&s, [.char("[")]) == [.loadTrash] && s.view == .trash)
        _ = press(&s, [.char("["), .char("[")])
        #expect(s.view == .conflicts)
        _ = press(&s, [.char("4")])
        let ctx = RenderContext(theme: Fixtures.theme, now: Fixtures.t0)
        #expect(Renderer.render(s, width: 80, height: 24, context: ctx).lines.joined().contains("loading…"))
        _ = s.apply(.trash([Self.trashed(2, "Documents/old plan.txt"), Self.trashed(1, "Documents/Archive", kind: .folder)]))
        let screen = Renderer.render(s, width: 80, height: 24, context: ctx).lines.joined(separator: "\n")
        #expect(screen.contains("Trash (2)") && screen.contains("2026-11-18 13:06") && screen.contains("2.0 KiB") && screen.contains("Documents/Archive/"), "\(screen)")
        #expect(screen.contains("4 Trash"), "the tab")
        // Restore: asks, default no; y restores the selected item.
        _ = press(&s, [.char("j"), .enter])
        #expect(s.confirm?.message.contains("Restore Documents/Archive") == true)
        #expect(press(&s, [.char("y")]) == [.restore(try! RelativePath(validating: "Documents/Archive"))])
        // Emptying: anything but the word is refused with a message, Esc keeps everything.
        _ = press(&s, [.char("E")] + Key.typing("yes") + [.enter])
        #expect(s.prompt?.error?.contains("type the word empty") == true)
        _ = press(&s, [.escape])
        #expect(s.prompt == nil)
        #expect(press(&s, [.char("E")] + Key.typing("empty") + [.enter]) == [.emptyTrash])
        _ = s.apply(.trash([]))
        #expect(Renderer.render(s, width: 80, height: 24, context: ctx).lines.joined().contains("the trash is empty"))
        #expect(press(&s, [.char("E")]).isEmpty && s.prompt == nil)
    }
}

/// #24 §2 the `:` command line and `Ctrl-R`.
@Suite("Command line")
struct CommandLineTests {
    func press(_ s: inout AppState, _ keys: [Key]) -> [Effect] { keys.flatMap { s.handle($0) } }
    func command(_ s: inout AppState, _ text: String) -> [Effect] { press(&s, [.char(":")] + Key.typing(text) + [.enter]) }

    @Test func commandsSwitchViewsThemesAndSortOrSayWhy() {
        var s = Fixtures.state()
        #expect(command(&s, "kv").isEmpty && s.view == .settings && s.prompt == nil)
        #expect(command(&s, "trash") == [.loadTrash] && s.view == .trash)
        #expect(command(&s, "files").isEmpty && s.view == .files)
        #expect(command(&s, "sort size").isEmpty && s.files.sortKey == .size)
        // A wrong command closes the prompt and says why (the next `:` starts afresh).
        #expect(command(&s, "sort colour").isEmpty && s.prompt == nil && s.flash?.text.contains("name, size, modified or status") == true)
        #expect(command(&s, "theme  dark") == [.setTheme("dark")], "spaces between words do not matter")
        #expect(command(&s, "frobnicate").isEmpty && s.prompt == nil && s.flash?.text.contains("unknown command 'frobnicate'") == true)
        _ = press(&s, [.char(":")] + Key.typing("kv"))
        #expect(s.prompt?.text == "kv", "the next : starts afresh: \(s.prompt?.text ?? "")")
        _ = press(&s, [.escape])
        #expect(command(&s, "help").isEmpty && s.help)
        _ = press(&s, [.escape])
        #expect(press(&s, [.ctrlR]) == [.reloadLook])
        #expect(command(&s, "q") == [.quit] && s.quit)
    }
}

/// #24 §2 `r` rename and `n` new folder in the Files view.
@Suite("Rename and new folder keys")
struct RenameKeysTests {
    func press(_ s: inout AppState, _ keys: [Key]) -> [Effect] { keys.flatMap { s.handle($0) } }

    @Test func renameStartsFromTheNameAndRefusesBadOnes() {
        var s = Fixtures.state()
        s.files.cursor.index = s.files.rows.firstIndex { $0.item.name == "plan.txt" }!
        _ = press(&s, [.char("r")])
        #expect(s.prompt?.text == "plan.txt")
        _ = press(&s, [.ctrlU] + Key.typing("a/b") + [.enter])
        #expect(s.prompt?.error?.contains("'/'") == true)
        #expect(press(&s, [.ctrlU] + Key.typing("plan v2.txt") + [.enter]) == [.rename(try! RelativePath(validating: "Documents/plan.txt"), to: "plan v2.txt")])
        // The same name again: nothing to do.
        _ = press(&s, [.char("r")])
        #expect(press(&s, [.enter]).isEmpty && s.prompt == nil)
        // A new folder in the folder shown.
        _ = press(&s, [.char("n")] + Key.typing("..") + [.enter])
        #expect(s.prompt?.error != nil)
        #expect(press(&s, [.ctrlU] + Key.typing("Projects") + [.enter]) == [.makeFolder(try! RelativePath(validating: "Documents/Projects"))])
        // Not from a find or the flat list (which folder would it be in?).
        _ = press(&s, [.char("F"), .char("n")])
        #expect(s.prompt == nil && s.flash?.level == .warn)
    }
}

/// #24 §2 `e` edit in `$EDITOR` and `o` open with `xdg-open`.
@Suite("Edit and open keys")
struct EditKeysTests {
    @Test func editFetchesACloudOnlyFileFirstAndOpenNeedsTheFolder() {
        var s = Fixtures.state()
        s.files.cursor.index = s.files.rows.firstIndex { $0.item.name == "cloud only.pdf" }!
        #expect(s.handle(.char("e")).isEmpty && s.flash?.level == .warn, "the folder is not known before the first status")
        s.status.folder = "/home/a/Ubiquity/iCloud.default"
        let path = try! RelativePath(validating: "Documents/cloud only.pdf")
        #expect(s.handle(.char("e")) == [.edit(path, absolute: "/home/a/Ubiquity/iCloud.default/Documents/cloud only.pdf", fetch: true)])
        #expect(s.handle(.char("o")) == [.open(absolute: "/home/a/Ubiquity/iCloud.default/Documents/cloud only.pdf")])
        s.files.cursor.index = s.files.rows.firstIndex { $0.item.name == "current.txt" }!
        if case .edit(_, _, let fetch)? = s.handle(.char("e")).first { #expect(!fetch) } else { Issue.record("no edit") }
        s.files.cursor.index = 0  // the folder Reports/
        #expect(s.handle(.char("e")).isEmpty)
        // y copies the path (OSC 52); Ctrl-Z suspends.
        #expect(s.handle(.char("y")) == [.copy("/home/a/Ubiquity/iCloud.default/Documents/Reports")])
        #expect(s.handle(.ctrlZ) == [.suspend])
    }
}
