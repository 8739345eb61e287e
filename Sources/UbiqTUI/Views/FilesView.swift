import Foundation
import UbiqCore

/// The Files view: the live list with a status column (glyph + colour, never colour alone),
/// a conflict marker, size, date, and a progress bar while an item transfers.
enum FilesView {
    static func render(_ f: FilesState, _ s: inout ScreenBuffer, _ r: Rect, _ c: RenderContext) {
        var title = f.filter != nil ? "Files \(c.dot) filter: \(f.filterText)" : f.flat ? "Files \(c.dot) all files" : "Files \(c.dot) \(f.folder.map { $0.string + "/" } ?? "/")"
        title += " (\(f.rows.count))"
        Box.draw(r, title: title, &s, c)
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
        for (i, row) in f.rows[cursor.top..<min(f.rows.count, cursor.top + inner.height)].enumerated() {
            line(row, f, &s, y: inner.y + i, x: inner.x, width: inner.width, selected: cursor.top + i == f.cursor.index, c)
        }
    }

    /// The status glyph and its role for an item (tui.md §3.5).
    static func status(_ i: MetadataItem) -> String {
        if i.uploadError != nil || i.downloadError != nil { return "status.error" }
        if i.excluded { return "status.paused" }
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
        let base = selected ? "ui.selection" : "ui.text"
        s.fill(Rect(x: x, y: y, width: width, height: 1), role: base)
        let st = status(i)
        // On the cursor row everything takes the selection's style (the glyphs still say the
        // state): a status colour there left a gap in the bar at the glyph cell.
        s.put(c.glyph(st), x: x + 1, y: y, role: selected ? base : st)
        if i.conflict { s.put(c.glyph("status.conflict"), x: x + 2, y: y, role: selected ? base : "status.conflict") }
        let wide = width >= 64
        let sizeW = 9, dateW = wide ? 16 : 0, gap = 2
        let nameW = max(4, width - 5 - sizeW - (wide ? dateW + gap : 0) - gap)
        let browsing = f.filter == nil && !f.flat
        var name = browsing ? i.name : i.path.string
        if i.kind == .folder { name = (c.ascii ? "> " : "▸ ") + name + "/" }
        s.putPadded(name, x: x + 4, y: y, width: nameW, role: base)
        let size = i.kind == .folder ? "\(row.childCount) item\(row.childCount == 1 ? "" : "s")" : ByteSize.format(Int64(i.size))
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

/// The Conflicts view: every item with unresolved conflict versions.
enum ConflictsView {
    static func render(_ items: [MetadataItem], _ cursor: ListCursor, _ s: inout ScreenBuffer, _ r: Rect, _ c: RenderContext) {
        Box.draw(r, title: "Conflicts (\(items.count))", &s, c)
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
            s.put(c.glyph("status.conflict"), x: inner.x + 1, y: y, role: "status.conflict")
            let dateW = inner.width >= 60 ? 16 : 0
            s.putPadded(i.path.string, x: inner.x + 3, y: y, width: inner.width - 4 - dateW, role: base)
            if dateW > 0 { s.putPadded(TimeFormat.short(i.modified), x: inner.maxX - dateW - 1, y: y, width: dateW, role: base) }
        }
    }
}
