import Foundation
import UbiqCore

/// The Trash view (`4`): every trashed item with when it was deleted and its size; `Enter`
/// restores after `y/N`, `E` purges everything after the word `empty` is typed.
enum TrashView {
    static func render(_ t: TrashState, _ s: inout ScreenBuffer, _ r: Rect, _ c: RenderContext) {
        Box.draw(r, title: "Trash (\(t.items.count)) \(c.dot) kept 30 days", &s, c)
        let inner = r.inset(1)
        guard t.loaded else {
            s.put("loading…", x: inner.x + 1, y: inner.y, role: "ui.hint.text")
            return
        }
        if t.items.isEmpty {
            s.put("the trash is empty", x: inner.x + 1, y: inner.y, role: "ui.hint.text")
            return
        }
        var cur = t.cursor
        cur.scroll(height: inner.height)
        for (n, i) in t.items[cur.top..<min(t.items.count, cur.top + inner.height)].enumerated() {
            let y = inner.y + n
            let base = cur.top + n == t.cursor.index ? "ui.selection" : "ui.text"
            s.fill(Rect(x: inner.x, y: y, width: inner.width, height: 1), role: base)
            s.hit(Rect(x: inner.x, y: y, width: inner.width, height: 1), .pick(cur.top + n))
            let dateW = 16, sizeW = 9
            s.putPadded(TimeFormat.short(i.deletedAt), x: inner.x + 1, y: y, width: dateW, role: base)
            let size = i.kind == .folder ? "folder" : ByteSize.format(Int64(i.current?.size ?? 0))
            s.putPadded(size, x: inner.x + 2 + dateW, y: y, width: sizeW, role: base, alignRight: true)
            let name = c.shown(i.path.string) + (i.kind == .folder ? "/" : "")
            s.putPadded(name, x: inner.x + 4 + dateW + sizeW, y: y, width: max(1, inner.width - 5 - dateW - sizeW), role: base)
        }
    }
}
