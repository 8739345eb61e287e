import Foundation

/// What a metadata query asks for: a scope, a predicate and a sort (product §5).
public struct MetadataQueryDefinition: Sendable, Equatable {
    /// `documents`: only items inside `Documents/`; `data`: the whole container.
    public enum Scope: String, Sendable, CaseIterable { case documents, data }
    /// Sort keys; ties are broken by path, so the order is total.
    public enum SortKey: String, Sendable, CaseIterable { case name, size, modified, path }

    public var scope: Scope
    public var predicate: QueryPredicate
    public var sort: SortKey
    public var ascending: Bool

    public init(scope: Scope = .data, predicate: QueryPredicate = .always(true), sort: SortKey = .name, ascending: Bool = true) {
        self.scope = scope; self.predicate = predicate; self.sort = sort; self.ascending = ascending
    }

    /// Parses the command line's form; errors are clear and name the position.
    public init(scope: String, predicate: String?, sort: String) throws {
        guard let s = Scope(rawValue: scope) else { throw CoreError(.invalidValue, "scope must be 'documents' or 'data'") }
        guard let k = SortKey(rawValue: sort) else { throw CoreError(.invalidValue, "sort must be 'name', 'size' or 'modified'") }
        let p: QueryPredicate
        if let text = predicate, !text.trimmingCharacters(in: .whitespaces).isEmpty {
            do { p = try QueryPredicate.parse(text) } catch let e as QueryPredicateError { throw CoreError(.invalidValue, e.description) }
        } else {
            p = .always(true)
        }
        self.init(scope: s, predicate: p, sort: k)
    }

    static let documents = try! RelativePath(validating: "Documents")

    /// Whether an item is in scope and matches the predicate.
    public func includes(_ item: MetadataItem, now: Date) -> Bool {
        if scope == .documents && !(item.path.isSelfOrDescendant(of: Self.documents) && item.path != Self.documents) { return false }
        return predicate.matches(item, now: now)
    }

    /// The query's order.
    public func areInOrder(_ a: MetadataItem, _ b: MetadataItem) -> Bool {
        func asc(_ x: MetadataItem, _ y: MetadataItem) -> Bool {
            switch sort {
            case .name:
                let (nx, ny) = (x.name.lowercased(), y.name.lowercased())
                if nx != ny { return nx < ny }
            case .size:
                if x.size != y.size { return x.size < y.size }
            case .modified:
                let (dx, dy) = (x.modified ?? .distantPast, y.modified ?? .distantPast)
                if dx != dy { return dx < dy }
            case .path: break
            }
            return x.path < y.path
        }
        return ascending ? asc(a, b) : asc(b, a)
    }

    /// Items that are in scope and match, in order.
    public func results(_ items: [MetadataItem], now: Date) -> [MetadataItem] {
        sorted(items.filter { includes($0, now: now) })
    }

    /// Sorts in the query's order, computing each item's key once (names are compared
    /// case-insensitively; lowering every name in every comparison would dominate large sorts).
    /// What is sorted is each item's key and position, not the items (an item is a large value:
    /// moving it at every step of a sort of 100,000 dominated the gathering of a query).
    public func sorted(_ items: [MetadataItem]) -> [MetadataItem] {
        guard items.count > 1 else { return items }
        var order = Array(items.indices)
        if sort == .name {
            let names = items.map { $0.name.lowercased() }
            order.sort { a, b in
                if names[a] != names[b] { return ascending ? names[a] < names[b] : names[a] > names[b] }
                return ascending ? items[a].path < items[b].path : items[b].path < items[a].path
            }
        } else {
            order.sort { areInOrder(items[$0], items[$1]) }
        }
        return order.map { items[$0] }
    }
}

/// Added, changed and removed items between two result sets (one "did update" notification).
public struct QueryDiff: Sendable, Equatable {
    public var added: [MetadataItem] = []
    public var changed: [MetadataItem] = []
    public var removed: [MetadataItem] = []
    public init(added: [MetadataItem] = [], changed: [MetadataItem] = [], removed: [MetadataItem] = []) {
        self.added = added; self.changed = changed; self.removed = removed
    }
    public var isEmpty: Bool { added.isEmpty && changed.isEmpty && removed.isEmpty }
}

/// The live query as a reducer: its state is the last result set *delivered*; each new snapshot
/// of the engine's items yields the next state and the diff to deliver. Pure; the engine feeds
/// it snapshots on its scheduler.
public struct QueryResults: Sendable {
    public let definition: MetadataQueryDefinition
    public private(set) var byID: [ItemID: MetadataItem] = [:]

    public init(_ definition: MetadataQueryDefinition) { self.definition = definition }

    /// Results in the query's order.
    public var ordered: [MetadataItem] { definition.sorted(Array(byID.values)) }

    /// Applies the new attributes of some items (nil: the item is gone) and returns what changed.
    public mutating func reduce(changes: [(ItemID, MetadataItem?)], now: Date) -> QueryDiff {
        var diff = QueryDiff()
        for (id, item) in changes {
            let old = byID[id]
            if let item, definition.includes(item, now: now) {
                byID[id] = item
                if let old { if old != item { diff.changed.append(item) } } else { diff.added.append(item) }
            } else if let old {
                byID[id] = nil
                diff.removed.append(old)
            }
        }
        diff.added = definition.sorted(diff.added)
        diff.changed = definition.sorted(diff.changed)
        diff.removed = definition.sorted(diff.removed)
        return diff
    }

    /// Replaces the state with what `snapshot` matches and returns what changed (diff lists in
    /// the query's order).
    public mutating func reduce(_ snapshot: [MetadataItem], now: Date) -> QueryDiff {
        var next: [ItemID: MetadataItem] = [:]
        next.reserveCapacity(byID.count)
        var diff = QueryDiff()
        for item in snapshot where definition.includes(item, now: now) {
            next[item.itemID] = item
            if let old = byID[item.itemID] {
                if old != item { diff.changed.append(item) }
            } else {
                diff.added.append(item)
            }
        }
        for (id, old) in byID where next[id] == nil { diff.removed.append(old) }
        byID = next
        diff.added = definition.sorted(diff.added)
        diff.changed = definition.sorted(diff.changed)
        diff.removed = definition.sorted(diff.removed)
        return diff
    }
}
