import Foundation
import UbiqCore

/// One row of the Files list: a folder (browsable) or an item.
public struct FileRow: Equatable, Sendable {
    public var item: MetadataItem
    /// Items inside a folder row (browse mode).
    public var childCount: Int
}

/// The Files view's state: every item of the live query, the folder being browsed (or a flat
/// list when filtering), the rows derived from them, and the selection.
public struct FilesState: Sendable {
    public private(set) var items: [ItemID: MetadataItem] = [:]
    public private(set) var rows: [FileRow] = []
    /// The folder shown (nil: the container's top level).
    public private(set) var folder: RelativePath?
    /// Flat list of every matching file instead of browsing folders.
    public private(set) var flat = false
    public private(set) var filterText = ""
    public private(set) var filter: QueryPredicate?
    public var cursor = ListCursor()
    public private(set) var gathered = false
    var childCounts: [RelativePath: Int] = [:]
    var rowIndex: [ItemID: Int] = [:]

    public init() {}

    public var selected: FileRow? { rows.indices.contains(cursor.index) ? rows[cursor.index] : nil }

    /// The whole result set after gathering.
    public mutating func gather(_ all: [MetadataItem]) {
        items = Dictionary(all.map { ($0.itemID, $0) }, uniquingKeysWith: { $1 })
        gathered = true
        rebuild()
    }

    /// One batch of the live query. A batch that only changes attributes of listed items (a
    /// transfer's progress, a status) updates their rows in place; anything else rebuilds.
    public mutating func apply(_ diff: QueryDiff, now: Date = Date()) {
        if diff.added.isEmpty && diff.removed.isEmpty && diff.changed.allSatisfy({ sameRow($0, now: now) }) {
            for i in diff.changed {
                items[i.itemID] = i
                if let at = rowIndex[i.itemID] { rows[at].item = i }
            }
            return
        }
        for i in diff.removed { items[i.itemID] = nil }
        for i in diff.added + diff.changed { items[i.itemID] = i }
        rebuild(now: now)
    }

    /// True when a changed item keeps its place: same path and kind, and still (not) filtered in.
    func sameRow(_ i: MetadataItem, now: Date) -> Bool {
        guard let old = items[i.itemID], old.path == i.path, old.kind == i.kind, old.size == i.size || i.kind == .file else { return false }
        guard let f = filter else { return true }
        return f.matches(old, now: now) == f.matches(i, now: now)
    }

    public mutating func open(_ folder: RelativePath?) {
        self.folder = folder
        cursor = ListCursor()
        rebuild()
    }

    public mutating func setFlat(_ on: Bool) {
        flat = on
        cursor = ListCursor()
        rebuild()
    }

    /// Applies (or clears, with empty text) a filter: plain text finds names containing it
    /// (ignoring case; `*` and `?` match as in a shell), text in the predicate language is a
    /// predicate (see ``FilesState/looksLikePredicate(_:)``).
    public mutating func setFilter(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        filter = trimmed.isEmpty ? nil : try Self.filter(trimmed)
        filterText = trimmed
        cursor = ListCursor()
        rebuild()
    }

    static func filter(_ text: String) throws -> QueryPredicate {
        guard !looksLikePredicate(text) else { return try QueryPredicate.parse(text) }
        let glob = text.contains("*") || text.contains("?")
        return .compare(.name, glob ? .like : .contains, .string(text), caseInsensitive: true)
    }

    /// True for text meant as a predicate: a comparison, quotes, parentheses or one of the
    /// language's words (`AND`, `LIKE`, …, any case); anything else is a name to find.
    public static func looksLikePredicate(_ text: String) -> Bool {
        if text.contains(where: { "=<>!()'\"&|".contains($0) }) { return true }
        let words: Set<String> = ["AND", "OR", "NOT", "LIKE", "CONTAINS", "BEGINSWITH", "ENDSWITH", "TRUEPREDICATE", "FALSEPREDICATE"]
        return text.split(whereSeparator: { $0 == " " || $0 == "\t" }).contains { words.contains($0.uppercased()) }
    }

    /// Rows for the current folder or the flat/filtered list, keeping the selected item selected.
    mutating func rebuild(now: Date = Date()) {
        let keep = selected?.item.itemID
        childCounts = [:]
        for i in items.values { if let p = i.path.parent { childCounts[p, default: 0] += 1 } }
        var out: [FileRow] = []
        if flat || filter != nil {
            for i in items.values where i.kind == .file && (filter?.matches(i, now: now) ?? true) {
                out.append(FileRow(item: i, childCount: 0))
            }
            out.sort { $0.item.path < $1.item.path }
        } else {
            for i in items.values where i.path.parent == folder {
                out.append(FileRow(item: i, childCount: i.kind == .folder ? childCounts[i.path, default: 0] : 0))
            }
            // Folders first, then by name ignoring case (each key computed once).
            out = out.map { ($0.item.kind == .folder ? 0 : 1, $0.item.name.lowercased(), $0) }.sorted { a, b in
                if a.0 != b.0 { return a.0 < b.0 }
                return a.1 != b.1 ? a.1 < b.1 : a.2.item.path < b.2.item.path
            }.map(\.2)
        }
        rows = out
        rowIndex = Dictionary(uniqueKeysWithValues: out.enumerated().map { ($0.element.item.itemID, $0.offset) })
        if let keep, let at = rows.firstIndex(where: { $0.item.itemID == keep }) { cursor.index = at }
        cursor.clamp(count: rows.count)
    }

    /// Items with unresolved conflicts, by path.
    public var conflicted: [MetadataItem] { items.values.filter(\.conflict).sorted { $0.path < $1.path } }
}

/// A selection in a list plus its scroll position.
public struct ListCursor: Equatable, Sendable {
    public var index = 0
    public var top = 0
    public init() {}

    public mutating func clamp(count: Int) {
        index = max(0, min(index, count - 1))
        if count == 0 { index = 0 }
    }

    public mutating func move(_ delta: Int, count: Int) {
        index += delta
        clamp(count: count)
    }

    /// Keeps the selection inside a window of `height` rows.
    public mutating func scroll(height: Int) {
        guard height > 0 else { return }
        if index < top { top = index }
        if index >= top + height { top = index - height + 1 }
        top = max(0, top)
    }
}
