import Foundation
import UbiqCore

/// The transfers pane (`t`, below the Files list): what moves now with its progress, then what
/// waits its turn, across the whole container (not just the folder shown); the title sums
/// both ways with throughput and ETA.
enum TransfersPane {
    /// The rows the pane lists: transfers under way first, then those waiting, each by path.
    static func rows(_ f: FilesState) -> (active: [MetadataItem], waiting: [MetadataItem]) {
        var active: [MetadataItem] = [], waiting: [MetadataItem] = []
        for i in f.items.values where i.kind == .file && !i.excluded {
            if i.downloading || i.uploading { active.append(i) } else if !i.uploaded || i.status == .downloaded { waiting.append(i) }
        }
        return (active.sorted { $0.path < $1.path }, waiting.sorted { $0.path < $1.path })
    }

    /// How many rows the pane lists (its scroll range when focused).
    static func rowCount(_ f: FilesState) -> Int {
        let (active, waiting) = rows(f)
        return active.count + waiting.count
    }

    static func render(_ f: FilesState, _ st: StatusInfo, _ s: inout ScreenBuffer, _ r: Rect, _ c: RenderContext) {
        let up = st.uploads, down = st.downloads
        var title = "Transfers \(c.dot) \(c.glyph("status.uploading")) \(up.running + up.queued) \(c.glyph("status.downloading")) \(down.running + down.queued)"
        if st.throughput > 0 { title += " \(c.dot) \(ByteSize.format(Int64(st.throughput)))/s" }
        if let eta = st.eta { title += " \(c.dot) ETA \(eta)" }
        let (allActive, allWaiting) = rows(f)
        // Scrolled (Tab focuses the pane): the rows above `paneTop` are left out.
        let top = min(f.paneTop, max(0, allActive.count + allWaiting.count - 1))
        let active = Array(allActive.dropFirst(top)), waiting = Array(allWaiting.dropFirst(max(0, top - allActive.count)))
        if top > 0 { title += " \(c.dot) from \(top + 1)" }
        Box.draw(r, title: title, &s, c, focused: f.paneFocused)
        let inner = r.inset(1)
        if allActive.isEmpty && allWaiting.isEmpty {
            s.put(st.paused ? "syncing is paused (P resumes it)" : "nothing to transfer", x: inner.x + 1, y: inner.y, role: "ui.hint.text")
            return
        }
        let barW = inner.width >= 60 ? 20 : 10
        let nameW = max(4, inner.width - barW - 19)
        var y = inner.y
        for i in active where y < inner.maxY {
            let role = i.downloading ? "status.downloading" : "status.uploading"
            let pct = (i.downloading ? i.percentDownloaded : i.percentUploaded) / 100
            s.put(c.glyph(role), x: inner.x + 1, y: y, role: role)
            s.putPadded(c.shown(i.path.string), x: inner.x + 3, y: y, width: nameW, role: "ui.text")
            ProgressBar.draw(pct, &s, x: inner.x + 4 + nameW, y: y, width: barW, c)
            s.putPadded(String(format: "%3.0f%%", pct * 100), x: inner.x + 5 + nameW + barW, y: y, width: 4, role: "ui.text", alignRight: true)
            s.putPadded(ByteSize.format(Int64(i.size)), x: inner.x + 10 + nameW + barW, y: y, width: 8, role: "ui.text", alignRight: true)
            y += 1
        }
        for i in waiting where y < inner.maxY {
            let error = i.uploadError ?? i.downloadError
            let role = error == nil ? "status.queued" : "status.error"
            s.put(c.glyph(role), x: inner.x + 1, y: y, role: role)
            s.putPadded(c.shown(i.path.string), x: inner.x + 3, y: y, width: nameW, role: "ui.text")
            s.put(error ?? (i.uploaded ? "waiting to download" : "waiting to upload"), x: inner.x + 4 + nameW, y: y, maxWidth: barW + 5,
                  role: error == nil ? "ui.hint.text" : "status.error")
            s.putPadded(ByteSize.format(Int64(i.size)), x: inner.x + 10 + nameW + barW, y: y, width: 8, role: "ui.text", alignRight: true)
            y += 1
        }
        let shown = min(active.count + waiting.count, inner.height)
        if active.count + waiting.count > shown, inner.height > 0 {
            s.putPadded("… and \(active.count + waiting.count - shown + 1) more", x: inner.x + 1, y: inner.maxY - 1, width: inner.width - 2, role: "ui.hint.text")
        }
    }
}
