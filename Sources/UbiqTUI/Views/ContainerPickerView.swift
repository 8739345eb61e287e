import Foundation
import UbiqEngine

/// The container picker over the current view: one row a container — a mark on the one shown,
/// its ID, whether it is the default, its engine's state — and the keys on the bottom line.
enum ContainerPickerView {
    static func render(_ p: ContainerPicker, _ s: inout ScreenBuffer, _ c: RenderContext) {
        let w = min(s.width - 4, 72)
        let rows = max(1, min(p.containers.count, s.height - 6))
        let h = rows + 2  // the keys go on the bottom border
        let r = Rect(x: (s.width - w) / 2, y: max(0, (s.height - h) / 2), width: w, height: h)
        Box.draw(r, title: "Containers (\(p.containers.count))", &s, c)
        let inner = r.inset(1)
        var cur = p.cursor
        cur.scroll(height: rows)
        let stateW = 16
        for (n, box) in p.containers[cur.top..<min(p.containers.count, cur.top + rows)].enumerated() {
            let y = inner.y + n
            let base = cur.top + n == p.cursor.index ? "ui.selection" : "ui.text"
            s.fill(Rect(x: inner.x, y: y, width: inner.width, height: 1), role: base)
            s.put(box.id == p.shown ? c.glyph("ui.pinned") : " ", x: inner.x + 1, y: y, role: base)
            let tag = box.isDefault ? "  (default)" : ""
            s.putPadded(box.id + tag, x: inner.x + 3, y: y, width: max(1, inner.width - 5 - stateW), role: base)
            let state = box.state + (box.idle || box.state == "stopped" ? "" : ", syncing")
            s.putPadded(state, x: inner.maxX - stateW - 1, y: y, width: stateW, role: base, alignRight: true)
        }
        var x = inner.x + 1
        let y = r.maxY - 1
        for (key, text) in [("Enter", " show  "), ("n", " new  "), ("j/k", " move  "), ("Esc", " close")] where x < inner.maxX - 8 {
            x += s.put(key, x: x, y: y, role: "ui.hint.key")
            x += s.put(text, x: x, y: y, role: "ui.text")
        }
    }
}
