import Foundation
import UbiqCore

/// One row of the Files list: a folder (browsable) or an item.
public struct FileRow: Equatable, Sendable {
    public var item: MetadataItem
    /// Items inside a folder row (browse mode).
    public var childCount: Int
    /// Everything under a folder row, counted (browse mode).
    public var summary: FolderSummary?
    public init(item: MetadataItem, childCount: Int, summary: FolderSummary? = nil) {
        self.item = item; self.childCount = childCount; self.summary = summary
    }
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
    /// How rows are ordered (folders stay first when browsing).
    public enum SortKey: String, Sendable, CaseIterable { case name, size, modified, status }
    public private(set) var sortKey = SortKey.name
    public private(set) var sortDescending = false
    /// The next key picks the sort (after `s`).
    public var choosingSort = false
    /// Names starting with `.` are left out unless shown (`.`); how many were left out.
    public private(set) var showHidden = false
    public private(set) var hiddenCount = 0
    /// Marked items (`Space`, `v`): `f`, `E` and `D` act on them.
    public private(set) var marked: Set<ItemID> = []
    private var markAnchor: ItemID?
    /// `v` opened a range at `markAnchor`: the rows between it and the cursor are shown as
    /// about to be marked until the next `v` marks them (Esc cancels).
    public private(set) var rangeOpen = false
    /// The anchor is a row just marked with Space: `v` marks from it at once (as before).
    private var anchorMarked = false
    /// The details pane (`i`) is open.
    public var details = false
    /// The transfers pane (`t`) is open (in the details pane's place).
    public var transfers = false
    /// `+`: the open pane takes the whole view (the list hidden).
    public var paneMaximized = false
    /// `Tab`: keys go to the open pane (the transfers pane scrolls), not the list.
    public var paneFocused = false
    /// The first row the transfers pane shows (it scrolls when focused).
    public var paneTop = 0

    /// Closes the details and transfers panes and what went with them.
    mutating func closePanes() {
        details = false
        transfers = false
        paneMaximized = false
        paneFocused = false
        paneTop = 0
    }
    var childCounts: [RelativePath: Int] = [:]
    var rowIndex: [ItemID: Int] = [:]
    /// Folder rows with a summary, by their path.
    var summaryRows: [Substring: Int] = [:]

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
                let old = items[i.itemID]
                items[i.itemID] = i
                if let at = rowIndex[i.itemID] { rows[at].item = i }
                // A file deeper inside a shown folder: that folder's summary follows (a transfer
                // ending inside it left the folder showing it as still waiting).
                if let old, i.kind == .file, let key = summaryKey(i.path), let at = summaryRows[key] {
                    rows[at].summary?.remove(old)
                    rows[at].summary?.add(i)
                }
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

    /// Sets the order outright (a person's default from config.toml).
    public mutating func setSort(_ key: SortKey, descending: Bool = false) {
        sortKey = key
        sortDescending = descending
        rebuild()
    }

    public mutating func sort(by key: SortKey) {
        sortDescending = key == sortKey ? !sortDescending : false
        sortKey = key
        rebuild()
    }

    public mutating func setShowHidden(_ on: Bool) {
        showHidden = on
        rebuild()
    }

    /// Marks or unmarks the selected item and moves down.
    public mutating func toggleMark() {
        guard let id = selected?.item.itemID else { return }
        if marked.remove(id) == nil { marked.insert(id); markAnchor = id; anchorMarked = true; rangeOpen = false }
        cursor.move(1, count: rows.count)
    }

    /// `v`: opens a range at the selected row (marked), or, open — or just after a Space mark —
    /// marks every row from where it began to the selected one and closes it.
    public mutating func markRange() {
        guard let here = selected?.item.itemID else { return }
        guard rangeOpen || anchorMarked, let a = markAnchor, let from = rowIndex[a], let to = rowIndex[here] else {
            marked.insert(here)
            markAnchor = here
            rangeOpen = true
            anchorMarked = false
            return
        }
        for r in rows[min(from, to)...max(from, to)] { marked.insert(r.item.itemID) }
        rangeOpen = false
        anchorMarked = false
    }

    /// The open range's rows (from where `v` opened it to the cursor), if one is open.
    public var openRange: ClosedRange<Int>? {
        guard rangeOpen, let a = markAnchor, let from = rowIndex[a] else { return nil }
        return min(from, cursor.index)...max(from, cursor.index)
    }

    /// Closes an open range without marking it (Esc); true if one was open.
    public mutating func cancelRange() -> Bool {
        defer { rangeOpen = false }
        return rangeOpen
    }

    public mutating func clearMarks() { marked = []; markAnchor = nil; rangeOpen = false; anchorMarked = false }

    /// The marked items that are still listed anywhere, by path.
    public var markedItems: [MetadataItem] { marked.compactMap { items[$0] }.sorted { $0.path < $1.path } }

    /// A dotfile, or (outside browsing) anything inside a dot-folder.
    static func isHidden(_ i: MetadataItem, browsing: Bool) -> Bool {
        browsing ? i.name.hasPrefix(".") : i.path.string.split(separator: "/").contains { $0.hasPrefix(".") }
    }

    /// Where a status stands when sorting by status: what needs the user first.
    static func statusRank(_ i: MetadataItem) -> Int {
        if i.uploadError != nil || i.downloadError != nil { return 0 }
        if i.conflict { return 1 }
        if i.uploading || i.downloading { return 2 }
        if !i.uploaded || i.status == .downloaded { return 3 }
        if i.excluded { return 4 }
        return i.status == .notDownloaded ? 5 : 6
    }

    /// Orders two rows by the sort key (name, then path, breaks ties; all reversed when asked).
    func ordered(_ a: MetadataItem, _ b: MetadataItem, byPath: Bool) -> Bool {
        sortDescending ? ascending(b, a, byPath: byPath) : ascending(a, b, byPath: byPath)
    }

    private func ascending(_ a: MetadataItem, _ b: MetadataItem, byPath: Bool) -> Bool {
        func name(_ i: MetadataItem) -> String { byPath ? i.path.string.lowercased() : i.name.lowercased() }
        let (na, nb) = (name(a), name(b))
        let tie = na != nb ? na < nb : a.path < b.path
        switch sortKey {
        case .name: return tie
        case .size: return a.size != b.size ? a.size < b.size : tie
        case .modified:
            let (ma, mb) = (a.modified ?? .distantPast, b.modified ?? .distantPast)
            return ma != mb ? ma < mb : tie
        case .status:
            let (x, y) = (Self.statusRank(a), Self.statusRank(b))
            return x != y ? x < y : tie
        }
    }

    /// Rows for the current folder or the flat/filtered list, keeping the selected item selected.
    mutating func rebuild(now: Date = Date()) {
        let keep = selected?.item.itemID
        childCounts = [:]
        for i in items.values { if let p = i.path.parent { childCounts[p, default: 0] += 1 } }
        var out: [FileRow] = []
        let browsing = !(flat || filter != nil)
        hiddenCount = 0
        // Browsing: each shown folder's files, everything under it counted (one look at each path).
        var summaries: [Substring: FolderSummary] = [:]
        if browsing {
            for i in items.values where i.kind == .file {
                if let key = summaryKey(i.path) { summaries[key, default: FolderSummary()].add(i) }
            }
        }
        for i in items.values {
            if browsing ? i.path.parent != folder : (i.kind != .file || !(filter?.matches(i, now: now) ?? true)) { continue }
            if !showHidden && Self.isHidden(i, browsing: browsing) { hiddenCount += 1; continue }
            out.append(FileRow(item: i, childCount: i.kind == .folder ? childCounts[i.path, default: 0] : 0,
                               summary: browsing && i.kind == .folder ? summaries[Substring(i.path.string)] ?? FolderSummary() : nil))
        }
        // Folders first when browsing; then by the sort key.
        out.sort { a, b in
            if browsing, (a.item.kind == .folder) != (b.item.kind == .folder) { return a.item.kind == .folder }
            return ordered(a.item, b.item, byPath: !browsing)
        }
        rows = out
        rowIndex = Dictionary(uniqueKeysWithValues: out.enumerated().map { ($0.element.item.itemID, $0.offset) })
        summaryRows = [:]
        for (n, r) in out.enumerated() where r.summary != nil { summaryRows[Substring(r.item.path.string)] = n }
        if let keep, let at = rows.firstIndex(where: { $0.item.itemID == keep }) { cursor.index = at }
        cursor.clamp(count: rows.count)
    }

    /// The shown folder a file deeper inside the browsed folder counts towards (its path's first
    /// component below the browsed folder); nil when not browsing or directly in it.
    func summaryKey(_ path: RelativePath) -> Substring? {
        guard !(flat || filter != nil) else { return nil }
        let p = path.string
        let prefix = folder.map { $0.string + "/" } ?? ""
        guard p.hasPrefix(prefix) else { return nil }
        let rest = p.utf8.dropFirst(prefix.utf8.count)
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        return p[..<slash]
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
