import Foundation
import UbiqCore
import UbiqDaemonProtocol

/// The container picker (`:container`): every container the device syncs with its state;
/// `Enter` shows the one under the cursor, `n` names a new one, `Esc` closes.
public struct ContainerPicker: Equatable, Sendable {
    public var containers: [ContainerState]
    /// The container the screen shows now.
    public var shown: String?
    public var cursor = ListCursor()

    public init(containers: [ContainerState], shown: String?) {
        self.containers = containers
        self.shown = shown ?? containers.first { $0.isDefault }?.id
        cursor.index = containers.firstIndex { $0.id == self.shown } ?? 0
    }

    public var selected: ContainerState? { containers.indices.contains(cursor.index) ? containers[cursor.index] : nil }
}

extension AppState {
    /// Keys while the picker is open.
    mutating func handlePicker(_ key: Key) -> [Effect] {
        guard var p = picker else { return [] }
        switch key {
        case .ctrlC: quit = true; return [.quit]
        case .char("q"), .escape: picker = nil
        case .enter, .char("l"), .right:
            picker = nil
            guard let c = p.selected, let id = try? ContainerID(validating: c.id) else { return [] }
            if c.id == p.shown { flash = Flash(text: "showing \(c.id) already", level: .info); return [] }
            return [.switchContainer(id)]
        case .char("n"), .char("a"):
            picker = nil
            prompt = Prompt(purpose: .newContainer, label: "container to sync and show (e.g. iCloud.com.example.notes)", text: "")
        case .char("R"), .f5:
            return [.listContainers]
        default:
            if Self.move(key, &p.cursor, count: p.containers.count, page: pageStep) { picker = p }
        }
        return []
    }
}
