import Foundation
import UbiqCore

/// The Files view: the live list with a status column (glyph + colour, never colour alone),
/// a conflict marker, size, date, and a progress bar while an item transfers.
enum FilesView {
    /// Rows the details or transfers pane takes below the list (when open and the screen is
    /// tall enough).
    /// Maximized (`+`), the pane takes the whole view.
    static func paneHeight(_ f: FilesState, main height: Int) -> Int {
        guard f.details || f.transfers else { return 0 }
        if f.paneMaximized && height >= 3 { return height }
        return height >= 14 ? 8 : 0
    }

    static func render(_ f: FilesState, _ status: StatusInfo, _ s: inout ScreenBuffer, _ area: Rect, _ c: RenderContext) {
        let dh = paneHeight(f, main: area.height)
        let r = Rect(x: area.x, y: area.y, width: area.width, height: area.height - dh)
        let pane = Rect(x: area.x, y: r.maxY, width: area.width, height: dh)
        if dh > 0 { if f.transfers { TransfersPane.render(f, status, &s, pane, c) } else { details(f.selected?.item, summary: f.selected?.summary, &s, pane, c, focused: f.paneFocused) } }
        guard r.height >= 3 else { return }
        var title = f.filter != nil ? "Files \(c.dot) find: \(f.filterText)" : f.flat ? "Files \(c.dot) all files" : "Files \(c.dot) \(f.folder.map { $0.string + "/" } ?? "/")"
        // Where the cursor stands: "12 of 10000" (#44 row 6: a long folder said only its count).
        title += f.rows.isEmpty ? " (0" : " (\(f.cursor.index + 1) of \(f.rows.count)"
        if f.hiddenCount > 0 { title += ", \(f.hiddenCount) hidden" }
        if !f.marked.isEmpty { title += ", \(f.marked.count) marked" }
        if let open = f.openRange { title += ", range of \(open.count)" }
        title += ")"
        if f.sortKey != .name || f.sortDescending { title += " \(c.dot) by \(f.sortKey.rawValue)\(f.sortDescending ? (c.ascii ? " v" : " ↓") : "")" }
        Box.draw(r, title: title, &s, c, focused: !f.paneFocused)
        let inner = r.inset(1)
        if !f.gathered {
            s.put("gathering…", x: inner.x + 1, y: inner.y, role: "ui.hint.text")
            return
        }
        if f.rows.isEmpty {
            s.put(f.filter != nil ? "nothing matches the filter (Esc clears it)" : "no documents here yet", x: inner.x + 1, y: inner.y, role: "ui.hint.text")
            return
        }
        var cursor = f.cursor
        cursor.scroll(height: inner.height)
        let open = f.openRange
        for (i, row) in f.rows[cursor.top..<min(f.rows.count, cursor.top + inner.height)].enumerated() {
            let index = cursor.top + i
            line(row, f, &s, y: inner.y + i, x: inner.x, width: inner.width, selected: index == f.cursor.index, c)
            s.hit(Rect(x: inner.x, y: inner.y + i, width: inner.width, height: 1), .pick(index))
            // An open range (`v`): its rows carry the mark's bar before they are marked.
            if let open, open.contains(index) { s.put(c.ascii ? "+" : "▌", x: inner.x, y: inner.y + i, role: index == f.cursor.index ? "ui.selection" : "ui.marked") }
        }
        // A scroll mark on the right border when the rows run past the box.
        if f.rows.count > inner.height, inner.height > 0 {
            let y = inner.y + (inner.height - 1) * cursor.top / max(1, f.rows.count - inner.height)
            s.put(c.ascii ? "#" : "┃", x: r.maxX - 1, y: min(inner.maxY - 1, y), role: "ui.border.focus")
        }
    }

    /// The status glyph and its role for an item (tui.md §3.5).
    static func status(_ i: MetadataItem) -> String {
        if i.uploadError != nil || i.downloadError != nil { return "status.error" }
        if i.excluded || (i.paused && (!i.uploaded || i.status != .current)) { return "status.paused" }
        if i.downloading { return "status.downloading" }
        if i.uploading { return "status.uploading" }
        if !i.uploaded { return "status.queued" }
        switch i.status {
        case .notDownloaded: return "status.cloud"
        case .downloaded: return "status.queued"
        case .current: return "status.synced"
        }
    }

    static func line(_ row: FileRow, _ f: FilesState, _ s: inout ScreenBuffer, y: Int, x: Int, width: Int, selected: Bool, _ c: RenderContext) {
        let i = row.item
        let isMarked = f.marked.contains(i.itemID)
        let base = selected ? "ui.selection" : "ui.text"
        s.fill(Rect(x: x, y: y, width: width, height: 1), role: base)
        if isMarked { s.put(c.ascii ? "+" : "▌", x: x, y: y, role: selected ? base : "ui.marked") }
        let st = row.summary?.status ?? status(i)
        // On the cursor row everything takes the selection's style (the glyphs still say the
        // state): a status colour there left a gap in the bar at the glyph cell.
        s.put(c.glyph(st), x: x + 1, y: y, role: selected ? base : st)
        if i.conflict || (row.summary?.conflicts ?? 0) > 0 { s.put(c.glyph("status.conflict"), x: x + 2, y: y, role: selected ? base : "status.conflict") }
        if i.pinned { s.put(c.glyph("ui.pinned"), x: x + 3, y: y, role: selected ? base : "ui.marked") }
        let wide = width >= 64
        let sizeW = 9, dateW = wide ? 16 : 0, gap = 2
        let nameW = max(4, width - 5 - sizeW - (wide ? dateW + gap : 0) - gap)
        let browsing = f.filter == nil && !f.flat
        var name = c.shown(browsing ? i.name : i.path.string)
        if i.kind == .folder { name = (c.ascii ? "> " : "▸ ") + name + "/" }
        s.putPadded(name, x: x + 4, y: y, width: nameW, role: isMarked && !selected ? "ui.marked" : base)
        // A folder: its total size when browsing (everything under it), else its item count.
        let size = i.kind != .folder ? ByteSize.format(Int64(i.size))
            : row.summary.map { ByteSize.format($0.bytes) } ?? "\(row.childCount) item\(row.childCount == 1 ? "" : "s")"
        s.putPadded(size, x: x + 4 + nameW + gap, y: y, width: sizeW, role: base, alignRight: true)
        guard wide else { return }
        let dx = x + 4 + nameW + gap + sizeW + gap
        if i.downloading || i.uploading {
            let pct = (i.downloading ? i.percentDownloaded : i.percentUploaded) / 100
            let g = c.glyph(i.downloading ? "status.downloading" : "status.uploading")
            s.put(g, x: dx, y: y, role: selected ? base : st)
            ProgressBar.draw(pct, &s, x: dx + 2, y: y, width: dateW - 7, c)
            s.putPadded(String(format: "%3.0f%%", pct * 100), x: dx + dateW - 4, y: y, width: 4, role: base, alignRight: true)
        } else if let e = i.uploadError ?? i.downloadError {
            s.putPadded(e, x: dx, y: y, width: dateW, role: selected ? base : "status.error")
        } else {
            s.putPadded(TimeFormat.short(i.modified), x: dx, y: y, width: dateW, role: base)
        }
    }
}

extension FilesView {
    /// The details pane (`i`): everything the list knows of the selected item.
    static func details(_ item: MetadataItem?, summary: FolderSummary? = nil, _ s: inout ScreenBuffer, _ r: Rect, _ c: RenderContext, focused: Bool = false) {
        Box.draw(r, title: "Details", &s, c, focused: focused)
        let inner = r.inset(1)
        guard let i = item else {
            s.put("nothing selected", x: inner.x + 1, y: inner.y, role: "ui.hint.text")
            return
        }
        var lines: [(String, String, String)] = [("path", c.shown(i.path.string) + (i.kind == .folder ? "/" : ""), "ui.text")]
        let bytes = i.kind == .folder ? summary.map { "folder: \($0.description)" } ?? "folder" : "\(ByteSize.format(Int64(i.size))) (\(i.size) bytes)"
        lines.append(("size", bytes, "ui.text"))
        lines.append(("state", summary?.stateWords ?? describe(i), summary?.status ?? status(i)))
        lines.append(("modified", TimeFormat.precise(i.modified) + (i.created.map { "   created \(TimeFormat.precise($0))" } ?? ""), "ui.text"))
        if let e = i.uploadError ?? i.downloadError { lines.append(("error", e, "status.error")) }
        for (n, (k, v, role)) in lines.prefix(inner.height).enumerated() {
            s.putPadded(k, x: inner.x + 1, y: inner.y + n, width: 9, role: "ui.hint.key")
            s.put(v, x: inner.x + 11, y: inner.y + n, maxWidth: inner.width - 12, role: role)
        }
    }

    /// The item's state in words (the glyph's meaning, with progress and what waits).
    static func describe(_ i: MetadataItem) -> String {
        var parts: [String] = []
        if i.excluded { parts.append("excluded (.nosync): stays on this device") }
        if i.downloading { parts.append(String(format: "downloading %.0f%%", i.percentDownloaded)) }
        if i.uploading { parts.append(String(format: "uploading %.0f%%", i.percentUploaded)) }
        if !i.excluded && !i.uploaded && !i.uploading { parts.append("waiting to upload") }
        switch i.status {
        case .notDownloaded where !i.downloading: parts.append("in the cloud only (f fetches)")
        case .downloaded: parts.append("a newer version is on the server")
        case .current where parts.isEmpty: parts.append("up to date")
        default: break
        }
        if i.conflict { parts.append("conflict: Enter shows the versions") }
        if i.pinned { parts.append("pinned: kept on this device (p unpins)") }
        if i.paused { parts.append("paused: its transfers wait (mark it, P resumes)") }
        return parts.joined(separator: "; ")
    }
}

/// The Conflicts view: every item with unresolved conflict versions.
enum ConflictsView {
    static func render(_ items: [MetadataItem], _ cursor: ListCursor, choices: ConflictChoices, _ s: inout ScreenBuffer, _ r: Rect, _ c: RenderContext) {
        let staged = choices.isEmpty ? "" : " \(c.dot) \(choices.staged.count) staged, A applies"
        Box.draw(r, title: "Conflicts (\(items.count))\(staged)", &s, c)
        let inner = r.inset(1)
        if items.isEmpty {
            s.put("no conflicts: every document has one current version", x: inner.x + 1, y: inner.y, role: "ui.hint.text")
            return
        }
        var cur = cursor
        cur.scroll(height: inner.height)
        for (n, i) in items[cur.top..<min(items.count, cur.top + inner.height)].enumerated() {
            let y = inner.y + n
            let base = cur.top + n == cursor.index ? "ui.selection" : "ui.text"
            s.fill(Rect(x: inner.x, y: y, width: inner.width, height: 1), role: base)
            s.hit(Rect(x: inner.x, y: y, width: inner.width, height: 1), .pick(cur.top + n))
            let selected = cur.top + n == cursor.index
            if choices.marked.contains(i.path) { s.put(c.ascii ? "+" : "▌", x: inner.x, y: y, role: selected ? base : "ui.marked") }
            s.put(c.glyph("status.conflict"), x: inner.x + 1, y: y, role: selected ? base : "status.conflict")
            let dateW = inner.width >= 60 ? 16 : 0
            // The staged choice, as its key and words: "< keep current".
            let choice = choices.staged[i.path].map { "\($0.key) \($0.label)" } ?? ""
            let choiceW = choice.isEmpty ? 0 : min(TextWidth.of(choice) + 2, max(0, inner.width / 3))
            s.putPadded(c.shown(i.path.string), x: inner.x + 3, y: y, width: inner.width - 4 - dateW - choiceW, role: base)
            if choiceW > 0 { s.putPadded(choice, x: inner.maxX - dateW - choiceW - 1, y: y, width: choiceW, role: selected ? base : "ui.flash.info") }
            if dateW > 0 { s.putPadded(TimeFormat.short(i.modified), x: inner.maxX - dateW - 1, y: y, width: dateW, role: base) }
        }
    }
}
