import Foundation
import Testing
import UbiqCore
import UbiqEngine
import UbiqProtocol
import UbiqTesting
@testable import UbiqTUI

/// Any key, in any state, at any terminal size: the controller and the renderer never crash,
/// and every frame has exactly the terminal's size. Seeded; the seed is printed.
@Suite("Key presses (seeded fuzz)")
struct KeyFuzzTests {
    static let keys: [Key] = [.up, .down, .left, .right, .pageUp, .pageDown, .home, .end, .enter, .escape, .backspace, .delete, .tab, .backTab,
                              .ctrlU, .ctrlD, .ctrlL, .ctrlA, .ctrlE, .ctrlW, .f1, .f5, .resize] + "123?qjkhlgGfEDd/FcaenyYR xé文🎉*'<>=,.bAz-vm".map { Key.char($0) }

    @Test func randomKeysNeverBreakTheScreen() {
        var rng = SeededRandom.forTest("tui.keys")
        let ctx = RenderContext(theme: Fixtures.theme, now: Fixtures.t0)
        let dev = DeviceID(uuid: UUID())
        let sequences = FuzzCases.count(100)
        for _ in 0..<sequences {
            var s = Fixtures.state(view: ViewID.allCases.randomElement(using: &rng)!, folder: Bool.random(using: &rng) ? "Documents" : nil)
            _ = s.apply(.settings([KVEntry(key: "k", value: .string("v"), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: dev)], keys: 1, bytes: 2))
            for _ in 0..<40 {
                let key = Self.keys.randomElement(using: &rng)!
                let effects = s.handle(key)
                // Engine results arrive at any moment, too.
                if Int.random(in: 0..<10, using: &rng) == 0 {
                    var d = QueryDiff()
                    if let i = Fixtures.items.randomElement(using: &rng) {
                        var c = i
                        c.percentDownloaded = Double(Int.random(in: 0...100, using: &rng))
                        if Bool.random(using: &rng) { d.changed = [c] } else { d.removed = [i] }
                    }
                    _ = s.apply(.update(d))
                }
                for e in effects {
                    if case .loadVersions(let p) = e {
                        _ = s.apply(.failed("could not load versions of \(p)"))
                    }
                }
                if s.quit { s.quit = false }
                let w = Int.random(in: 1...160, using: &rng), h = Int.random(in: 1...60, using: &rng)
                let screen = Renderer.render(s, width: w, height: h, context: ctx)
                #expect(screen.lines.count == h)
                if w >= Renderer.minWidth && h >= Renderer.minHeight {
                    for line in screen.lines where TextWidth.of(line) != w {
                        Issue.record("a line of \(TextWidth.of(line)) columns at width \(w) after \(key) (seed \(rng.seed))")
                        return
                    }
                }
            }
        }
    }
}
