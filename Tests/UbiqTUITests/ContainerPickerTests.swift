import Foundation
import Testing
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
@testable import UbiqTUI

/// The container picker (`:container`) as plain state and as drawn.
@Suite("Container picker")
struct ContainerPickerTests {
    static let list = [
        ContainerState(id: "iCloud.default", folder: "/h/Ubiquity/iCloud.default", isDefault: true, state: "online", idle: true),
        ContainerState(id: "TEAM.com.example.notes", folder: "/h/Ubiquity/TEAM.com.example.notes", isDefault: false, state: "online", idle: false),
        ContainerState(id: "iCloud.com.example.prefs", folder: "/h/Ubiquity/iCloud.com.example.prefs", isDefault: false, state: "offline", idle: true),
    ]

    func press(_ s: inout AppState, _ keys: [Key]) -> [Effect] { keys.flatMap { s.handle($0) } }

    @Test func commandOpensThePickerOnTheShownContainerAndEnterSwitches() throws {
        var s = Fixtures.state()
        #expect(press(&s, [.char(":")] + Key.typing("container") + [.enter]) == [.listContainers])
        _ = s.apply(.containers(Self.list, shown: "TEAM.com.example.notes"))
        #expect(s.picker?.selected?.id == "TEAM.com.example.notes", "the cursor starts on the one shown")
        #expect(press(&s, [.char("1")]).isEmpty && s.view == .files && s.picker != nil, "keys go to the picker while it is open")
        _ = press(&s, [.char("j"), .char("j"), .char("j")])
        #expect(s.picker?.selected?.id == "iCloud.com.example.prefs", "stops at the end")
        #expect(press(&s, [.char("g")]).isEmpty && s.picker?.selected?.id == "iCloud.default")
        #expect(press(&s, [.enter]) == [.switchContainer(try ContainerID(validating: "iCloud.default"))])
        #expect(s.picker == nil)

        // The one shown already: nothing to do, said so.
        _ = s.apply(.containers(Self.list, shown: nil))
        #expect(s.picker?.selected?.id == "iCloud.default", "none chosen yet: the default is the one shown")
        #expect(press(&s, [.enter]).isEmpty && s.flash?.text.contains("already") == true)
        _ = s.apply(.containers(Self.list, shown: nil))
        #expect(press(&s, [.escape]).isEmpty && s.picker == nil)
        _ = press(&s, [.char("q")])
        #expect(s.quit, "q quits again once the picker is closed")
    }

    @Test func newContainerIsNamedAndCheckedInAPrompt() throws {
        var s = Fixtures.state()
        _ = s.apply(.containers(Self.list, shown: nil))
        _ = press(&s, [.char("n")])
        #expect(s.picker == nil && s.prompt?.purpose == .newContainer)
        _ = press(&s, Key.typing("../etc") + [.enter])
        #expect(s.prompt?.error?.contains("not a container ID") == true, "a bad ID stays in the prompt with the reason")
        _ = press(&s, [.ctrlU] + Key.typing("iCloud.com.example.new"))
        #expect(press(&s, [.enter]) == [.switchContainer(try ContainerID(validating: "iCloud.com.example.new"))])
        #expect(s.prompt == nil)
    }

    @Test func drawnWithStatesAndKeysAtEightyByTwentyFour() {
        var s = Fixtures.state()
        _ = s.apply(.containers(Self.list, shown: "TEAM.com.example.notes"))
        let ctx = RenderContext(theme: Fixtures.theme, ascii: true, now: Fixtures.t0)
        let drawn = Renderer.render(s, width: 80, height: 24, context: ctx)
        Fixtures.golden("containers-80x24", drawn)
        let screen = drawn.lines
        let text = screen.joined(separator: "\n")
        #expect(text.contains("Containers (3)"))
        #expect(screen.contains { $0.contains("iCloud.default  (default)") && $0.contains("online") })
        #expect(screen.contains { $0.contains("* TEAM.com.example.notes") && $0.contains("online, syncing") }, "\(text)")
        #expect(screen.contains { $0.contains("iCloud.com.example.prefs") && $0.contains("offline") })
        #expect(text.contains("Enter show") && text.contains("Esc close"))
        // Narrow and short: still drawn inside the screen, the cursor's row kept in view.
        let small = Renderer.render(s, width: 40, height: 10, context: ctx).lines
        #expect(small.count == 10 && small.allSatisfy { TextWidth.of($0) <= 40 })
        #expect(small.contains { $0.contains("TEAM.com") }, "\(small.joined(separator: "\n"))")
    }
}
