import UbiqCore

/// What a person decided for a conflicted document in the Conflicts view (tui.md §3.3): staged
/// first, shown beside it, applied together after a summary.
public enum ConflictChoice: String, Sendable, Equatable, CaseIterable {
    /// Keep the current version (the left one); the conflict versions go to history.
    case current
    /// Keep the conflict version (the right one; only when there is exactly one).
    case conflict
    /// Keep the current version, and each conflict version as a document beside it.
    case both
    /// Keep whichever version (current or conflict) was modified last / first.
    case newer, older

    /// "keep current", as the row and the summary say it.
    public var label: String {
        switch self {
        case .current: "keep current"
        case .conflict: "keep the conflict"
        case .both: "keep both"
        case .newer: "keep the newer"
        case .older: "keep the older"
        }
    }

    /// The key that stages it.
    public var key: String {
        switch self {
        case .current: "<"
        case .conflict: ">"
        case .both: "b"
        case .newer: "]"
        case .older: "["
        }
    }
}

/// The staged decisions and the marks of the Conflicts view. Pure: the controller changes it,
/// the view shows it, `A` turns it into effects.
public struct ConflictChoices: Equatable, Sendable {
    public private(set) var staged: [RelativePath: ConflictChoice] = [:]
    public private(set) var marked: Set<RelativePath> = []
    /// Staged paths, oldest first (`z` takes back the last).
    private var order: [RelativePath] = []

    public init() {}

    public var isEmpty: Bool { staged.isEmpty }

    /// Stages `choice` for `paths` (a later choice for a path replaces its earlier one).
    public mutating func stage(_ paths: [RelativePath], _ choice: ConflictChoice) {
        for p in paths {
            staged[p] = choice
            order.removeAll { $0 == p }
            order.append(p)
        }
    }

    /// Decide later: the paths' staged choices go.
    public mutating func skip(_ paths: [RelativePath]) {
        for p in paths { staged[p] = nil }
        order.removeAll { staged[$0] == nil }
    }

    /// Takes back the last staged choice; the path it was for.
    @discardableResult
    public mutating func undo() -> RelativePath? {
        guard let p = order.popLast() else { return nil }
        staged[p] = nil
        return p
    }

    /// Marks or unmarks a path.
    public mutating func toggleMark(_ p: RelativePath) {
        if marked.remove(p) == nil { marked.insert(p) }
    }

    public mutating func clearMarks() { marked.removeAll() }

    /// Forgets what is about documents no longer in conflict (resolved here or elsewhere).
    public mutating func keep(only live: Set<RelativePath>) {
        staged = staged.filter { live.contains($0.key) }
        marked.formIntersection(live)
        order.removeAll { !live.contains($0) }
    }

    /// "keep current for 2 documents, keep both for plan.txt": what applying would do, in a
    /// fixed order (a document alone by its name).
    public var summary: String {
        ConflictChoice.allCases.compactMap { c in
            let paths = staged.filter { $0.value == c }.map(\.key).sorted()
            guard let first = paths.first else { return nil }
            return "\(c.label) for \(paths.count == 1 ? first.name : Counted.of(paths.count, "document"))"
        }.joined(separator: ", ")
    }

    /// The staged decisions in path order.
    public var decisions: [(RelativePath, ConflictChoice)] { staged.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
}
