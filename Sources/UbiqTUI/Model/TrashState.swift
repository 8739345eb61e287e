import Foundation
import UbiqCore
import UbiqProtocol

/// The Trash view's list (loaded when the view opens, and after each restore or purge).
public struct TrashState: Equatable, Sendable {
    public var items: [ItemRecord] = []
    public var cursor = ListCursor()
    public var loaded = false
    public init() {}
    public var selected: ItemRecord? { items.indices.contains(cursor.index) ? items[cursor.index] : nil }
}
