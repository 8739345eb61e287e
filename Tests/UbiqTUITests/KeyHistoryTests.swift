import Foundation
import Testing
import UbiqCore
import UbiqProtocol
@testable import UbiqTUI
import UbiqTesting

/// `i` in Settings (tui.md §3.4): the selected key's value history — who wrote what, when —
/// in a pane below the list, following the selection and the store's changes.
@Suite("Settings key history")
struct KeyHistoryTests {
    func press(_ s: inout AppState, _ keys: [Key]) -> [Effect] { keys.flatMap { s.handle($0) } }

    @Test func iShowsTheSelectedKeysWritesAndFollowsTheSelection() {
        TimeFormat.use(TimeZone(identifier: "UTC")!)
        var s = Fixtures.state(view: .settings)
        let phone = DeviceID(uuid: UUID()), laptop = DeviceID(uuid: UUID())
        let at = { (n: Int64) in HLCTimestamp(wallMillis: Int64(Fixtures.t0.timeIntervalSince1970 * 1000) + n * 1000, counter: 0) }
        _ = s.apply(.settings([KVEntry(key: "fontSize", value: .int(14), stamp: at(9), device: phone),
                               KVEntry(key: "theme", value: .string("dark"), stamp: at(5), device: laptop)], keys: 2, bytes: 20))
        s.settings.cursor.index = 0
        #expect(press(&s, [.char("i")]) == [.loadKeyHistory("fontSize")] && s.settings.historyOpen)
        var screen = Renderer.render(s, width: 100, height: 30, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0)).lines.joined(separator: "\n")
        #expect(screen.contains("History of fontSize") && screen.contains("loading…"), "\(screen)")
        let now = Date()
        let devices = [DeviceInfo(id: phone, name: "phone", created: now, lastSeen: now, signedIn: true, current: false),
                       DeviceInfo(id: laptop, name: "laptop", created: now, lastSeen: now, signedIn: true, current: true)]
        _ = s.apply(.keyHistory(key: "fontSize", entries: [KVEntry(key: "fontSize", value: .int(14), stamp: at(9), device: phone),
                                                           KVEntry(key: "fontSize", value: nil, stamp: at(7), device: laptop),
                                                           KVEntry(key: "fontSize", value: .int(12), stamp: at(3), device: phone)],
                                devices: devices, error: nil))
        screen = Renderer.render(s, width: 100, height: 30, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0)).lines.joined(separator: "\n")
        let lines = screen.split(separator: "\n")
        let first = lines.firstIndex { $0.contains("(int) 14") }, deleted = lines.firstIndex { $0.contains("(deleted)") }, oldest = lines.firstIndex { $0.contains("(int) 12") }
        #expect(first != nil && deleted != nil && oldest != nil && first! < deleted! && deleted! < oldest!, "newest first: \(screen)")
        #expect(lines[first!].contains("phone") && lines[first!].contains("11:06:49") && lines[deleted!].contains("this device"), "who and when: \(screen)")
        // The history of another key arriving late is not shown for this one.
        _ = s.apply(.keyHistory(key: "theme", entries: [], devices: nil, error: nil))
        #expect(s.settings.history?.entries?.count == 3)
        // Moving the selection loads the next key's; the store changing reloads the shown one.
        #expect(press(&s, [.char("j")]) == [.loadKeyHistory("theme")] && s.settings.history?.key == "theme")
        #expect(s.apply(.settings(s.settings.all, keys: 2, bytes: 20)) == [.loadKeyHistory("theme")])
        _ = s.apply(.keyHistory(key: "theme", entries: nil, devices: nil, error: "the server is not reachable"))
        screen = Renderer.render(s, width: 100, height: 30, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0)).lines.joined(separator: "\n")
        #expect(screen.contains("the server is not reachable"))
        // i closes it; moving then loads nothing.
        #expect(press(&s, [.char("i")]).isEmpty && !s.settings.historyOpen && s.settings.history == nil)
        #expect(press(&s, [.char("k")]).isEmpty)
        #expect(!Renderer.render(s, width: 100, height: 30, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0)).lines.joined().contains("History of"))
    }
}
