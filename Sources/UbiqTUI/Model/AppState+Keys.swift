import Foundation
import UbiqCore

/// The controller: maps a key to state changes and effects. Pure; the app runs the effects.
extension AppState {
    /// Rows the list views show at once (set by the layout; used for paging).

    public mutating func handle(_ key: Key) -> [Effect] {
        if flash?.sticky == true { flash = nil }
        if confirm != nil { return handleConfirm(key) }
        if prompt != nil { return handlePrompt(key) }
        if picker != nil { return handlePicker(key) }
        if help { return handleHelp(key) }
        switch key {
        case .ctrlC: quit = true; return [.quit]
        case .char("?"), .f1: help = true; helpTop = 0; return []
        case .char("1"), .char("2"), .char("3"), .char("4"):
            if case .char(let c) = key, let v = ViewID(rawValue: Int(String(c))!) { view = v; versions = nil }
            return view == .trash ? [.loadTrash] : []
        case .char("[") where !(view == .conflicts && versions == nil), .char("]") where !(view == .conflicts && versions == nil):
            // Previous / next view, round the ends (in Conflicts they keep the older / newer).
            let n = ViewID.allCases.count
            view = ViewID(rawValue: (view.rawValue - 1 + (key == .char("]") ? 1 : n - 1)) % n + 1)!
            versions = nil
            return view == .trash ? [.loadTrash] : []
        case .char("R"), .f5: flash = Flash(text: "syncing now…", level: .info); return [.syncNow]
        case .char(":"):
            prompt = Prompt(purpose: .command, label: "command (q, files, conflicts, kv, trash, theme NAME, sort FIELD, container [ID], help)", text: "")
            return []
        case .ctrlZ: return [.suspend]
        case .char("P") where !(view == .files && versions == nil && !files.marked.isEmpty):
            // Pause or resume syncing (every view; the header says `paused` until resumed). With
            // marks in Files, only their transfers (see `handleFiles`).
            let on = !status.paused
            flash = Flash(text: on ? "pausing…" : "resuming…", level: .info)
            return [.pause(on)]
        case .char("y") where versions == nil && (view == .files || view == .settings):
            if view == .settings {
                guard let e = settings.selected, let v = e.value else { return [] }
                flash = Flash(text: "copied the value of \(e.key)", level: .info)
                return [.copy(v.displayText)]
            }
            guard let row = files.selected else { return [] }
            let text = status.folder.isEmpty ? row.item.path.string : status.folder + "/" + row.item.path.string
            flash = Flash(text: "copied \(TextWidth.fit(text, 60))", level: .info)
            return [.copy(text)]
        case .ctrlR:
            flash = Flash(text: "reading the theme and config.toml again…", level: .info)
            return [.reloadLook]
        default: break
        }
        if versions != nil { return handleVersions(key) }
        switch view {
        case .files: return handleFiles(key)
        case .conflicts: return handleConflicts(key)
        case .settings: return handleSettings(key)
        case .trash: return handleTrash(key)
        }
    }

    /// The help overlay scrolls with the list keys; `q`, `Esc`, `?` or F1 close it.
    mutating func handleHelp(_ key: Key) -> [Effect] {
        switch key {
        case .ctrlC: quit = true; return [.quit]
        case .char("q"), .escape, .char("?"), .f1: help = false; helpFilter = ""
        case .char("/"):
            prompt = Prompt(purpose: .helpFilter, label: "find in the help (a key or a word; empty shows all)", text: helpFilter)
        default:
            let lines = Overlays.helpBody(self, screen: screenWidth, glyph: { _ in "?" }).count
            let rows = Overlays.helpRows(screen: screenHeight, lines: lines)
            var c = ListCursor()
            c.index = helpTop
            if Self.move(key, &c, count: max(1, lines - rows + 1), page: max(1, rows - 1)) { helpTop = c.index }
        }
        return []
    }

    /// Rows a page key moves: what the list shows, less one kept for context.
    var pageStep: Int { max(1, pageRows - 1) }

    /// Movement keys shared by every list; a page is `page` rows (what the list shows, less one
    /// kept for context).
    static func move(_ key: Key, _ c: inout ListCursor, count: Int, page: Int) -> Bool {
        switch key {
        case .char("j"), .down: c.move(1, count: count)
        case .char("k"), .up: c.move(-1, count: count)
        case .pageDown: c.move(page, count: count)
        case .pageUp: c.move(-page, count: count)
        case .ctrlD: c.move(max(1, page / 2), count: count)  // half a page, as in tig and lf
        case .ctrlU: c.move(-max(1, page / 2), count: count)
        case .char("g"), .home: c.index = 0; c.clamp(count: count)
        case .char("G"), .end: c.index = count - 1; c.clamp(count: count)
        case .pick(let n): c.index = n; c.clamp(count: count)
        default: return false
        }
        return true
    }

    mutating func quitOrClose() -> [Effect] {
        let moving = status.uploads.running + status.uploads.queued
        if engineInProcess, confirm == nil, status.waiting > 0 || moving > 0 {
            let n = max(status.waiting, moving)
            confirm = Confirmation(message: "\(n) change\(n == 1 ? "" : "s") waiting to go up; syncing stops when you quit (a daemon would go on: ubiq daemon). Quit?",
                                   effect: .quit)
            return []
        }
        quit = true
        return [.quit]
    }

    /// Opens the folder to restore once the listing has it (see `folderToRestore`).
    mutating func restoreFolderIfListed() {
        guard let folder = folderToRestore, files.gathered else { return }
        if files.items.values.contains(where: { $0.kind == .folder && $0.path == folder }) {
            files.open(folder)
            folderToRestore = nil
        }
    }

    // MARK: Files

    mutating func handleFiles(_ key: Key) -> [Effect] {
        folderToRestore = nil  // the user is moving: the listing stays where they take it
        if files.choosingSort { return chooseSort(key) }
        if (key == .tab || key == .backTab) && (files.details || files.transfers) {
            files.paneFocused.toggle()
            return []
        }
        if files.paneFocused {
            // The focused pane: the transfers pane scrolls; Esc (or Tab) gives the keys back to the list.
            let rows = files.transfers ? TransfersPane.rowCount(files) : 0
            var c = ListCursor()
            c.index = files.paneTop
            if key == .escape { files.paneFocused = false; return [] }
            if Self.move(key, &c, count: rows, page: pageStep) {
                files.paneTop = max(0, c.index)
                return []
            }
        }
        if Self.move(key, &files.cursor, count: files.rows.count, page: pageStep) { return [] }
        switch key {
        case .char("q"): return quitOrClose()
        case .escape:
            // An open range first, then marks, then the filter; never quits.
            if files.cancelRange() { return [] }
            if !files.marked.isEmpty { files.clearMarks() } else if !files.filterText.isEmpty { try? files.setFilter("") }
            return []
        case .char(" "):
            files.toggleMark()
            return []
        case .char("v"):
            files.markRange()
            if files.rangeOpen { flash = Flash(text: "range open: move, then v marks it (Esc cancels)", level: .info) }
            return []
        case .char("s"):
            files.choosingSort = true
            flash = Flash(text: "sort by: n name  s size  m modified  t status (the same again reverses; Esc keeps)", level: .info)
            return []
        case .char("."):
            files.setShowHidden(!files.showHidden)
            flash = Flash(text: files.showHidden ? "dotfiles shown" : "dotfiles hidden (. shows them)", level: .info)
            return []
        case .char("i"):
            let open = !files.details
            files.closePanes()
            files.details = open
            return []
        case .char("t"):
            let open = !files.transfers
            files.closePanes()
            files.transfers = open
            return []
        case .char("+"):
            guard files.details || files.transfers else {
                flash = Flash(text: "+ gives the whole view to the details (i) or transfers (t) pane", level: .info)
                return []
            }
            files.paneMaximized.toggle()
            return []
        case .char("e"), .char("o"):
            guard let row = files.selected, row.item.kind == .file else { return [] }
            guard !status.folder.isEmpty else { flash = Flash(text: "the synced folder is not known yet", level: .warn); return [] }
            let absolute = status.folder + "/" + row.item.path.string
            if key == .char("o") { return [.open(absolute: absolute)] }
            return [.edit(row.item.path, absolute: absolute, fetch: row.item.status == .notDownloaded)]
        case .char("r"):
            guard let row = files.selected else { return [] }
            prompt = Prompt(purpose: .rename(row.item.path), label: "rename \(TextWidth.fit(row.item.name, 30)) to", text: row.item.name)
            return []
        case .char("n"):
            guard files.filter == nil && !files.flat else { flash = Flash(text: "a new folder goes in the folder shown: leave the find or flat list first", level: .warn); return [] }
            prompt = Prompt(purpose: .newFolder(files.folder), label: "new folder in \(files.folder.map { $0.string + "/" } ?? "/")", text: "")
            return []
        case .enter, .char("l"), .right:
            guard let row = files.selected else { return [] }
            if row.item.kind == .folder { files.open(row.item.path); return [] }
            if key == .enter { return openVersions(row.item.path) }
            return []
        case .char("h"), .left, .backspace:
            if files.filter == nil && !files.flat, let f = files.folder {
                let from = f
                files.open(f.parent)
                if let at = files.rows.firstIndex(where: { $0.item.path == from }) { files.cursor.index = at }
            }
            return []
        case .char("/"):
            prompt = Prompt(purpose: .filter, label: "find (a name, or a predicate: size > 1MB AND name LIKE '*.txt')", text: files.filterText)
            return []
        case .char("F"):
            files.setFlat(!files.flat)
            return []
        case .char("f") where !files.marked.isEmpty:
            let items = files.markedItems.filter { !$0.excluded }
            files.clearMarks()
            flash = Flash(text: "fetching \(items.count) item\(items.count == 1 ? "" : "s")…", level: .info)
            return items.map { .download($0.path) }
        case .char("E") where !files.marked.isEmpty:
            let items = files.markedItems
            let (busy, ready) = (items.filter(Self.hasUnsentChanges), items.filter { !Self.hasUnsentChanges($0) })
            files.clearMarks()
            if !busy.isEmpty { flash = Flash(text: "\(Counted.of(busy.count, "item")) \(busy.count == 1 ? "has" : "have") changes not uploaded yet and \(busy.count == 1 ? "stays" : "stay"); evicting \(ready.count)", level: .warn) }
            return ready.map { .evict($0.path) }
        case .char("P"):
            // Marked items only: their transfers wait (or go on); the first one decides which.
            let items = files.markedItems
            guard let first = items.first else { return [] }
            let on = !first.paused
            flash = Flash(text: "\(on ? "pausing" : "resuming") the transfers of \(items.count == 1 ? first.name : "\(items.count) items")…", level: .info)
            files.clearMarks()
            return [.hold(items.map(\.path), on)]
        case .char("p"):
            // Pin / unpin (marked items, else the selected one): the first one decides which.
            let targets = files.marked.isEmpty ? [files.selected?.item].compactMap { $0 } : files.markedItems
            guard let first = targets.first else { return [] }
            let items = targets.filter { !$0.excluded }
            files.clearMarks()
            guard !items.isEmpty else {
                flash = Flash(text: "\(first.name) is excluded (.nosync): it stays on this device anyway", level: .warn)
                return []
            }
            let on = !first.pinned
            flash = Flash(text: "\(on ? "pinning" : "unpinning") \(items.count == 1 ? items[0].name : "\(items.count) items")…", level: .info)
            return [.pin(items.map(\.path), on)]
        case .char("z"):
            // Take back the last delete (restored from the trash) or rename made here.
            guard let last = filesUndo.popLast() else { flash = Flash(text: "nothing to undo", level: .info); return [] }
            switch last {
            case .deleted(let p):
                flash = Flash(text: "restoring \(p.name)…", level: .info)
                return [.restore(p)]
            case .renamed(let from, let to):
                flash = Flash(text: "renaming \(to.name) back to \(from.name)…", level: .info)
                return [.renameBack(to, to: from.name)]
            }
        case .char("X"):
            // Cancel downloads (marked items, else the selected one): they stay in the cloud.
            let targets = files.marked.isEmpty ? [files.selected?.item].compactMap { $0 } : files.markedItems
            let moving = targets.filter { $0.downloading || $0.kind == .folder || ($0.status == .notDownloaded && !$0.excluded) }
            files.clearMarks()
            if moving.isEmpty, let first = targets.first {
                flash = Flash(text: first.uploading ? "\(first.name) is uploading: an upload cannot be cancelled alone (P pauses all syncing)"
                    : "\(first.name) is not being downloaded", level: .warn)
                return []
            }
            guard !moving.isEmpty else { return [] }
            flash = Flash(text: "cancelling \(moving.count == 1 ? moving[0].name : "\(moving.count) downloads")…", level: .info)
            return [.cancelTransfers(moving.map(\.path))]
        case .char("u"):
            // Retry now: failing items (marked ones, or the selected item; a folder: all in it)
            // are tried again at once instead of after their retry delay.
            let targets = files.marked.isEmpty ? [files.selected?.item].compactMap { $0 } : files.markedItems
            guard !targets.isEmpty else { return [] }
            files.clearMarks()
            return [.retry(targets.map(\.path))]
        case .char("D") where !files.marked.isEmpty, .delete where !files.marked.isEmpty:
            let items = files.markedItems
            confirm = Confirmation(message: "Delete \(items.count) marked item\(items.count == 1 ? "" : "s") from all devices? They stay in the server's trash for 30 days.",
                                   effects: items.map { .delete($0.path) })
            files.clearMarks()
            return []
        case .char("f"):
            guard let row = files.selected else { return [] }
            if row.item.excluded { flash = Flash(text: "\(row.item.name) is excluded (.nosync): it stays on this device", level: .warn); return [] }
            flash = Flash(text: "fetching \(row.item.name)…", level: .info)
            return [.download(row.item.path)]
        case .char("E"):
            guard let row = files.selected else { return [] }
            if Self.hasUnsentChanges(row.item) {
                flash = Flash(text: "\(row.item.name) has changes not uploaded yet; it can be evicted once they are", level: .warn)
                return []
            }
            return [.evict(row.item.path)]
        case .char("D"), .delete:
            guard let row = files.selected else { return [] }
            let what = row.item.kind == .folder ? "the folder \(row.item.path) and everything in it" : row.item.path.string
            confirm = Confirmation(message: "Delete \(what) from all devices? It stays in the server's trash for 30 days.", effect: .delete(row.item.path))
            return []
        case .char("c"):
            if let row = files.selected, row.item.conflict { return openVersions(row.item.path) }
            view = .conflicts
            return []
        default: return []
        }
    }

    /// A file whose content has not all reached the server (evicting it would lose that).
    static func hasUnsentChanges(_ i: MetadataItem) -> Bool { i.kind == .file && (!i.uploaded || i.uploading) }

    /// The key after `s`: a sort field (the current one again reverses); anything else keeps.
    mutating func chooseSort(_ key: Key) -> [Effect] {
        files.choosingSort = false
        let picked: FilesState.SortKey? = switch key {
        case .char("n"): .name
        case .char("s"): .size
        case .char("m"): .modified
        case .char("t"): .status
        default: nil
        }
        guard let picked else { flash = nil; return [] }
        files.sort(by: picked)
        flash = Flash(text: "sorted by \(picked.rawValue)\(files.sortDescending ? ", reversed" : "")", level: .info)
        return []
    }

    mutating func openVersions(_ path: RelativePath) -> [Effect] {
        versions = VersionsState(path: path)
        return [.loadVersions(path)]
    }

    /// Why a typed name cannot name a file or folder (nil: it can).
    static func badName(_ name: String) -> String? {
        if name.isEmpty { return "a name cannot be empty" }
        if name.contains("/") { return "a name cannot hold '/'" }
        if name == "." || name == ".." { return "'\(name)' is not a name" }
        if name.utf8.count > 255 { return "a name is at most 255 bytes" }
        if name.unicodeScalars.contains(where: { $0.value < 32 || $0.value == 127 }) { return "a name cannot hold control characters" }
        return nil
    }

    // MARK: the command line

    /// `:q`, `:files`, `:conflicts`, `:kv` (or `:settings`), `:trash`, `:theme NAME`,
    /// `:sort FIELD`, `:container [ID]`, `:approve CODE` (a new device of an encrypted account),
    /// `:help`; anything else stays in the prompt with the reason.
    mutating func runCommand(_ p: Prompt) -> [Effect] {
        var p = p
        let words = p.text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        prompt = nil
        commandLine.ran(p.text)
        switch (words.first ?? "", words.count) {
        case ("", _): return []
        case ("q", 1), ("quit", 1): return quitOrClose()
        case ("files", 1): view = .files; versions = nil; return []
        case ("conflicts", 1): view = .conflicts; versions = nil; return []
        case ("kv", 1), ("settings", 1): view = .settings; versions = nil; return []
        case ("trash", 1): view = .trash; versions = nil; return [.loadTrash]
        case ("help", 1): help = true; helpTop = 0; return []
        case ("theme", 2): return [.setTheme(words[1])]
        case ("container", 1), ("containers", 1): return [.listContainers]
        case ("container", 2):
            if let id = try? ContainerID(validating: words[1]) { return [.switchContainer(id)] }
            p.error = "'\(words[1])' is not a container ID (letters, digits, . _ -)"
        case ("approve", 3): return [.approveDevice(words[1] + words[2])]  // typed as shown: XXXXX XXXXX
        case ("approve", 2): return [.approveDevice(words[1])]
        case ("approve", 1):
            p.error = status.joining.isEmpty ? "no device waits to join; a new device's 'ubiq login' shows a code to approve here"
                : "type the code \(status.joining[0]) shows: approve XXXXX-XXXXX"
        case ("sort", 2):
            if let key = FilesState.SortKey(rawValue: words[1]) { files.setSort(key); return [] }
            p.error = "sort by name, size, modified or status"
        default:
            p.error = "unknown command '\(p.text)': q, files, conflicts, kv, trash, theme NAME, sort FIELD, container [ID], approve CODE, help"
        }
        // The prompt closes and says why (#44 row 8: it stayed open with the bad text, and the
        // next `:` was typed into it); ↑ brings the line back to mend.
        if let error = p.error { flash = Flash(text: error, level: .error) }
        return []
    }

    /// `↑` / `↓` in the `:` prompt: the commands run before, newest first, then the line typed.
    mutating func recall(_ step: Int, _ p: inout Prompt) {
        guard let line = commandLine.recall(step) else { return }
        p.text = line
        p.back = 0
        p.error = nil
    }

    /// `Tab` in the `:` prompt (see `CommandHistory.complete`); several choices left are listed
    /// in the flash.
    mutating func complete(_ p: inout Prompt) {
        guard let (text, choices) = CommandHistory.complete(p.text, sortFields: FilesState.SortKey.allCases.map(\.rawValue)) else {
            flash = Flash(text: "nothing to complete '\(p.text.split(separator: " ").last ?? "")'", level: .info)
            return
        }
        p.text = text
        p.back = 0
        if !choices.isEmpty { flash = Flash(text: choices.joined(separator: "  "), level: .info) }
    }

    // MARK: Trash

    mutating func handleTrash(_ key: Key) -> [Effect] {
        if Self.move(key, &trash.cursor, count: trash.items.count, page: pageStep) { return [] }
        switch key {
        case .char("q"): return quitOrClose()
        case .enter, .char("r"):
            guard let i = trash.selected else { return [] }
            confirm = Confirmation(message: "Restore \(i.path) on every device\(i.kind == .folder ? ", with everything it held" : ", with its history")?",
                                   effect: .restore(i.path))
            return []
        case .char("E"):
            guard !trash.items.isEmpty else { flash = Flash(text: "the trash is empty", level: .info); return [] }
            prompt = Prompt(purpose: .emptyTrash, label: "purge \(Counted.of(trash.items.count, "item")) for good? type empty", text: "")
            return []
        case .char("u"), .ctrlL: return [.loadTrash]
        default: return []
        }
    }

    // MARK: Conflicts

    mutating func handleConflicts(_ key: Key) -> [Effect] {
        let list = files.conflicted
        if Self.move(key, &conflictCursor, count: list.count, page: pageStep) { return [] }
        let here = list.indices.contains(conflictCursor.index) ? list[conflictCursor.index].path : nil
        // A choice is for the marked documents, else the selected one.
        let targets = choices.marked.isEmpty ? [here].compactMap { $0 } : choices.marked.sorted()
        switch key {
        case .char("q"): return quitOrClose()
        case .enter, .char("l"), .right:
            guard let here else { return [] }
            return openVersions(here)
        case .char("i"), .char("x"):
            // Details of the document's versions: its Versions view with the details shown.
            guard let here else { return [] }
            let effects = openVersions(here)
            versions?.details = true
            return effects
        case .char("m"), .char("e"):
            // Merge the selected document's text conflict (its only conflict version) and edit the result.
            guard let here else { return [] }
            return [.merge(here, conflict: nil)]
        case .char("<"), .char(","), .char(">"), .char("."), .char("b"), .char("]"), .char("["):
            guard !targets.isEmpty else { return [] }
            let choice: ConflictChoice = switch key {
            case .char("<"), .char(","): .current
            case .char("b"): .both
            case .char("]"): .newer
            case .char("["): .older
            default: .conflict
            }
            choices.stage(targets, choice)
            choices.clearMarks()
            if targets.count == 1 { conflictCursor.move(1, count: list.count) }
            flash = Flash(text: "staged: \(choice.label) for \(targets.count == 1 ? targets[0].name : "\(targets.count) documents") (A applies, z takes back)", level: .info)
        case .char("-"):
            choices.skip(targets)
            choices.clearMarks()
        case .char("z"):
            if let p = choices.undo() { flash = Flash(text: "took back the choice for \(p.name)", level: .info) }
        case .char(" "), .char("v"):
            guard let here else { return [] }
            choices.toggleMark(here)
            conflictCursor.move(1, count: list.count)
        case .escape:
            choices.clearMarks()
        case .char("A"):
            guard !choices.isEmpty else { flash = Flash(text: "nothing staged: < keeps current, > the conflict, b both", level: .info); return [] }
            let n = choices.staged.count
            let what = choices.summary.prefix(1).uppercased() + choices.summary.dropFirst()
            confirm = Confirmation(message: n == 1 ? "\(what), on every device? The versions not kept stay in history."
                                   : "\(what): \(n) decisions, applied on every device? The versions not kept stay in history.",
                                   effects: choices.decisions.map { .decide($0.0, $0.1) } + [.clearChoices])
        default: return []
        }
        return []
    }

    // MARK: Versions

    mutating func handleVersions(_ key: Key) -> [Effect] {
        guard var v = versions else { return [] }
        defer { if versions != nil { versions = v } }
        if key == .tab || key == .backTab {
            v.contentFocused.toggle()
            return []
        }
        if key == .char("+") {
            // The content on the whole view (focused: keys scroll it), and back.
            v.maximized.toggle()
            v.contentFocused = v.maximized
            return []
        }
        if v.contentFocused, scrollContent(key, &v) { return [] }
        if v.loading, [.enter, .char("m"), .char("e"), .char("b"), .char("o")].contains(key) {
            v.typedAhead = key
            return []
        }
        if Self.move(key, &v.cursor, count: v.rows.count, page: pageStep) { return previewEffect(&v) }
        switch key {
        case .char("n") where !v.search.isEmpty, .char("N") where !v.search.isEmpty:
            findInContent(&v, backwards: key == .char("N"))
            return []
        case .escape where v.contentFocused:
            v.contentFocused = false
            return []
        case .char("q"), .escape, .char("h"), .left:
            versions = nil
            return []
        case .char("d"):
            v.showDiff.toggle()
            v.details = false
            return []
        case .char("i"), .char("x"):
            v.details.toggle()
            return []
        case .char("w"):
            v.wrap.toggle()
            v.column = 0
            flash = Flash(text: v.wrap ? "long lines wrap" : "long lines cut: ← → scroll sideways", level: .info)
            return []
        case .char("o"):
            guard let row = v.selected else { return [] }
            return [.openVersion(v.path, row.record)]
        case .enter:
            guard let row = v.selected else { return [] }
            if row.kind == .current && v.rows.allSatisfy({ $0.kind != .conflict }) {
                flash = Flash(text: "this is already the current version", level: .info)
                return []
            }
            let label = Self.describe(row.record)
            confirm = Confirmation(message: "Keep the version from \(label)? It becomes the current version of \(v.path) on every device; the others stay in its history.",
                                   effect: .resolve(v.path, row.record.id, label: label))
            return []
        case .char("m"), .char("e"):
            let conflicts = v.rows.filter { $0.kind == .conflict }
            guard !conflicts.isEmpty else { flash = Flash(text: "no conflict to merge", level: .info); return [] }
            if let row = v.selected, row.kind == .conflict { return [.merge(v.path, conflict: row.record.id)] }
            guard conflicts.count == 1 else { flash = Flash(text: "\(conflicts.count) conflict versions: select the one to merge", level: .info); return [] }
            return [.merge(v.path, conflict: conflicts[0].record.id)]
        case .char("b"):
            let conflicts = v.rows.filter { $0.kind == .conflict }.count
            guard conflicts > 0 else { flash = Flash(text: "no conflict to keep beside it", level: .info); return [] }
            confirm = Confirmation(message: "Keep both? The current version stays \(v.path.name); \(conflicts == 1 ? "the conflict version becomes a document" : "each of the \(conflicts) conflict versions becomes a document") beside it, named '… (conflict from DEVICE DATE)'.",
                                   effect: .keepBoth(v.path))
            return []
        default: return []
        }
    }

    /// "laptop · 2026-11-22 10:42 · 12 B"
    static func describe(_ r: VersionRecord) -> String {
        "\(r.deviceName) · \(TimeFormat.short(r.modified)) · \(ByteSize.format(Int64(r.size)))"
    }

    /// Columns `←` / `→` move unwrapped content by.
    static let sideStep = 8

    /// Keys of the focused content: scrolling, and `/` to find text in it. True if taken.
    mutating func scrollContent(_ key: Key, _ v: inout VersionsState) -> Bool {
        let last = max(0, v.contentLines.count - 1)
        switch key {
        case .char("j"), .down: v.scroll = min(last, v.scroll + 1)
        case .char("k"), .up: v.scroll = max(0, v.scroll - 1)
        case .pageDown: v.scroll = min(last, v.scroll + pageStep)
        case .pageUp: v.scroll = max(0, v.scroll - pageStep)
        case .ctrlD: v.scroll = min(last, v.scroll + max(1, pageStep / 2))
        case .ctrlU: v.scroll = max(0, v.scroll - max(1, pageStep / 2))
        case .char("g"), .home: v.scroll = 0; v.found = nil
        case .char("G"), .end: v.scroll = last; v.found = nil
        case .char("/"): prompt = Prompt(purpose: .contentSearch, label: "find in the content (n next, N previous)", text: v.search)
        // Sideways, when lines are not wrapped (wrapped, `h` / `←` go back as in the list;
        // not wrapped, they stop at the first column: a held key does not leave the view).
        case .char("l") where !v.wrap, .right where !v.wrap: v.column = min(v.maxColumn(screenWidth: screenWidth), v.column + Self.sideStep)
        case .char("h") where !v.wrap, .left where !v.wrap: v.column = max(0, v.column - Self.sideStep)
        default: return false
        }
        return true
    }

    /// Scrolls to the next (or previous) line holding the search text, wrapping around.
    mutating func findInContent(_ v: inout VersionsState, backwards: Bool = false, fromTop: Bool = false) {
        let from = fromTop ? v.scroll - 1 : (v.found ?? v.scroll - 1)
        guard let at = v.match(from: from, backwards: backwards) else {
            v.found = nil
            flash = Flash(text: "no line holds '\(v.search)'", level: .warn)
            return
        }
        if (backwards && at >= from) || (!backwards && at <= from) { flash = Flash(text: "search wrapped around", level: .info) }
        v.found = at
        v.scroll = max(0, at - 3)
    }

    func previewEffect(_ v: inout VersionsState) -> [Effect] {
        guard let row = v.selected, v.previewFor != row.record.id else { return [] }
        v.scroll = 0
        v.found = nil
        v.preview = nil
        v.previewFor = row.record.id
        return [.loadPreview(v.path, row.record, current: v.rows.first { $0.kind == .current }?.record)]
    }

    // MARK: Settings

    mutating func handleSettings(_ key: Key) -> [Effect] {
        if settings.viewing != nil { settings.viewKey(key, page: pageStep); return [] }
        if Self.move(key, &settings.cursor, count: settings.entries.count, page: pageStep) { return settings.historyToLoad() }
        switch key {
        case .char("q"): return quitOrClose()
        case .char("v"):
            guard let e = settings.selected else { return [] }
            settings.viewing = e.key
            settings.viewTop = 0
            return []
        case .char("a"), .char("n"):
            prompt = Prompt(purpose: .newKey, label: "new key (1-64 bytes)", text: "")
            return []
        case .char("e"), .enter:
            guard let e = settings.selected, let v = e.value else { return [] }
            let type = Self.editType(v)
            prompt = Prompt(purpose: .value(key: e.key, type: type, isNew: false), label: "\(e.key) (\(type))", text: Self.editText(v))
            return []
        case .char("D"), .delete:
            guard let e = settings.selected else { return [] }
            confirm = Confirmation(message: "Delete the setting '\(e.key)' on every device?", effect: .setValue(key: e.key, value: nil))
            return []
        case .char("/"):
            prompt = Prompt(purpose: .settingsFilter, label: "find keys (part of a name; empty shows all)", text: settings.filter)
            return []
        case .escape where !settings.filter.isEmpty:
            settings.filter = ""
            return []
        case .char("r"):
            guard let e = settings.selected, e.value != nil else { return [] }
            prompt = Prompt(purpose: .renameKey(from: e.key), label: "rename \(e.key) to (1-64 bytes)", text: e.key)
            return []
        case .char("E"):
            return [.editStore]
        case .char("z"):
            // Undo the last write made here: one more write, synced like any other.
            guard let last = settings.undo.popLast() else {
                flash = Flash(text: "nothing to undo", level: .info)
                return []
            }
            flash = Flash(text: "undoing: \(last.what)…", level: .info)
            return [.undoSettings(last.previous, what: last.what)]
        case .char("Y"):
            guard let e = settings.selected, let v = e.value else { return [] }
            flash = Flash(text: "copied \(e.key)=…", level: .info)
            return [.copy("\(e.key)=\(v.displayText)")]
        case .char("i"):
            // Who changed the key last, and when (the store keeps the last writer of each key).
            guard let e = settings.selected else { return [] }
            flash = Flash(text: "\(e.key): \(e.value?.typeName ?? "deleted"), changed by \(settings.provenance(e, precise: true))", level: .info)
            // The pane below the list: its last writes, who made them and when (i closes it).
            settings.historyOpen.toggle()
            if !settings.historyOpen { settings.history = nil }
            return settings.historyToLoad()
        case .char(" "):
            // A bool flips at once (saved on every device, like any edit); other types open the editor.
            guard let e = settings.selected, let v = e.value else { return [] }
            guard case .bool(let b) = v else { return handleSettings(.enter) }
            flash = Flash(text: "\(e.key) → \(!b)", level: .info)
            return [.setValue(key: e.key, value: .bool(!b))]
        default: return []
        }
    }

    static func editType(_ v: KVValue) -> String {
        switch v {
        case .array, .dictionary: "json"
        default: v.typeName
        }
    }

    static func editText(_ v: KVValue) -> String { v.displayText }
}
