import Foundation
import UbiqCore
import UbiqProtocol

/// One version of the item in the Versions view.
public struct VersionRow: Equatable, Sendable {
    public enum Kind: String, Sendable { case current, conflict, history }
    public var kind: Kind
    public var record: VersionRecord
}

/// The Versions view: one item's versions, the selected one's preview and its diff with the current.
public struct VersionsState: Equatable, Sendable {
    public var path: RelativePath
    public var rows: [VersionRow] = []
    public var cursor = ListCursor()
    public var loading = true
    /// A key that needs the versions (Enter, `m`, `b`, `o`), pressed while they load: it is
    /// acted on when they arrive (typed ahead, as in `Enter` `m` at once).
    public var typedAhead: Key?
    public var showDiff = false
    /// Preview lines of the selected version (text, or a hex dump for binary content).
    public var preview: [String]?
    public var previewIsText = true
    /// Text of the current version (for the diff).
    public var currentText: [String]?
    public var previewFor: VersionID?
    public var error: String?
    /// Where keys go: the list of versions, or the content (`Tab`).
    public var contentFocused = false
    /// `+`: the content takes the whole view (the list of versions hidden).
    public var maximized = false
    /// `i` / `x`: the selected version's details (device, times, size, hash, what it was
    /// based on) in the content's place.
    public var details = false
    /// The first content line shown (the panes scroll together).
    public var scroll = 0
    /// Long lines wrap (`w` toggles); not wrapped, they show from `column` on (`←` / `→`).
    public var wrap = true
    public var column = 0
    /// `/` in the content: the text `n` / `N` look for (any case), and the line of the match
    /// shown (the content scrolls to a few lines above it).
    public var search = ""
    public var found: Int?
    public init(path: RelativePath) { self.path = path }
    public var selected: VersionRow? { rows.indices.contains(cursor.index) ? rows[cursor.index] : nil }

    /// The diff is shown (asked for, and there is text on both sides to compare).
    public var showsDiff: Bool { showDiff && previewIsText && currentText != nil && selected?.kind != .current }
    /// The selected version beside the current one (text on both sides, not the current itself).
    public var showsBoth: Bool { !showsDiff && previewIsText && currentText != nil && preview != nil && selected?.kind != .current }

    /// The lines the content shows, as searched and scrolled: the diff's, or the selected
    /// version's (beside the current one's, whichever is longer counts).
    /// How far `→` may scroll on a screen this wide: until the widest line's end is in view
    /// (the panes' borders, a diff's marks and the markers' columns taken off).
    public func maxColumn(screenWidth: Int) -> Int {
        let widest = max(ContentLayout.widest(contentLines), showsBoth ? ContentLayout.widest(currentText ?? []) : 0)
        let pane = (showsBoth && screenWidth >= 84 ? screenWidth / 2 : screenWidth) - 3 - (showsDiff ? 2 : 0) - 2
        return max(0, widest - max(1, pane))
    }

    public var contentLines: [String] {
        if showsDiff, let cur = currentText, let p = preview { return LineDiff.diff(cur, p).map(\.text) }
        return preview ?? []
    }

    /// The next line (after `from`, or before it when `backwards`) holding the search text,
    /// wrapping around; nil when none does.
    public func match(from: Int, backwards: Bool = false) -> Int? {
        // Wrapping around from `from`, `from` itself last.
        let lines = contentLines
        guard !search.isEmpty, !lines.isEmpty else { return nil }
        for step in 1...lines.count {
            let i = ((from + (backwards ? -step : step)) % lines.count + lines.count) % lines.count
            if lines[i].range(of: search, options: .caseInsensitive) != nil { return i }
        }
        return nil
    }
}
