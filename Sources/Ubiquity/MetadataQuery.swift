import Foundation
import UbiqDaemonProtocol

/// A live query over the container's items, as `NSMetadataQuery`: a scope, a predicate and a
/// sort; `notifications()` first delivers `didFinishGathering` with every match, then
/// `didUpdate` with what was added, changed and removed, batched at `interval`. Every attribute
/// of the items (download and upload status and progress, conflicts…) is there.
///
/// ```swift
/// let query = MetadataQuery(predicate: "name LIKE '*.txt'", scope: .documents)
/// for try await note in query.notifications() {
///     switch note {
///     case .didFinishGathering(let items): show(items)
///     case .didUpdate(let added, let changed, let removed): apply(added, changed, removed)
///     }
/// }
/// ```
public final class MetadataQuery: Sendable {
    /// Which items: `documents` (only `Documents/…`) or `data` (the whole container).
    public enum Scope: String, Sendable { case documents, data }
    public enum Sort: String, Sendable { case name, size, modified }

    /// What a running query reports.
    public enum Notification: Sendable, Equatable {
        case didFinishGathering([MetadataItem])
        case didUpdate(added: [MetadataItem], changed: [MetadataItem], removed: [MetadataItem])
    }

    public let predicate: String?
    public let scope: Scope
    public let sort: Sort
    public let interval: Duration
    /// The container queried (nil: the device's first).
    public let container: String?
    let ubiquity: Ubiquity
    let state = Locked(State())

    struct State {
        var results: [ItemID: MetadataItem] = [:]
        /// The first gathering was delivered: a later one (the daemon came back) is an update.
        var gathered = false
        var paused = false
        /// Updates that came while paused, merged, delivered on `resume`.
        var held: (added: [ItemID: MetadataItem], changed: [ItemID: MetadataItem], removed: [ItemID: MetadataItem]) = ([:], [:], [:])
        var resume: (@Sendable () -> Void)?
    }

    /// `predicate` in the query language (`name LIKE '*.txt' AND size > 1MB`; nil: every item).
    public init(predicate: String? = nil, scope: Scope = .data, sort: Sort = .name, interval: Duration = .milliseconds(100), container: String? = nil,
                ubiquity: Ubiquity = .standard) {
        self.predicate = predicate; self.scope = scope; self.sort = sort; self.interval = interval; self.container = container; self.ubiquity = ubiquity
    }

    /// A predicate built in Swift (`.compare(.name, .like, .string("*.txt"), caseInsensitive: true)`).
    public convenience init(_ predicate: QueryPredicate, scope: Scope = .data, sort: Sort = .name, interval: Duration = .milliseconds(100),
                            container: String? = nil, ubiquity: Ubiquity = .standard) {
        self.init(predicate: predicate.description, scope: scope, sort: sort, interval: interval, container: container, ubiquity: ubiquity)
    }

    /// The items matching now (as of the last notification delivered), in the query's sort.
    public var results: [MetadataItem] {
        let items = Array(state.withLock { $0.results.values })
        switch sort {
        case .name: return items.sorted { $0.path < $1.path }
        case .size: return items.sorted { ($0.size, $0.path) > ($1.size, $1.path) }
        case .modified: return items.sorted { ($0.modified ?? .distantPast, $0.path) > ($1.modified ?? .distantPast, $1.path) }
        }
    }

    /// Holds updates back (as `disableUpdates`): `results` stays as it is; `resume` applies and
    /// delivers what came meanwhile as one update.
    public func pause() { state.withLock { $0.paused = true } }

    public func resume() {
        let wake = state.withLock { s -> (@Sendable () -> Void)? in
            s.paused = false
            return s.resume
        }
        wake?()
    }

    /// Starts the query: the gathering, then updates, until the consuming task stops iterating
    /// (which ends the query in the daemon). Throws when no daemon runs or the predicate is bad.
    /// The query outlives its daemon: when it stops (a restart, an upgrade) the query waits
    /// for one to answer again (looking every `retry`) and reports what changed meanwhile as
    /// one update.
    public func notifications(retry: Duration = .seconds(1)) -> AsyncThrowingStream<Notification, Error> {
        let spec = QuerySpec(predicate: predicate, scope: scope.rawValue, sort: sort.rawValue,
                             intervalMillis: max(1, Int(interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)))
        let container = self.container
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let id = try container.map { c in
                        do { return try ContainerID(validating: c) } catch { throw UbiquityError(.notInContainer, "'\(c)' is not a container ID") }
                    }
                    try await ubiquity.follow(.watch(query: spec), container: id, retry: retry, began: { [self] in state.withLock { $0.gathered } }) { [self] r in
                        guard let e = r.event else { return true }
                        if let n = await self.take(e) { continuation.yield(n) }
                        return !Task.isCancelled
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            state.withLock { $0.resume = { [self] in if let n = self.release() { continuation.yield(n) } } }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Applies an event to the results; what to deliver now (nil while paused).
    func take(_ e: QueryEventLine) async -> Notification? {
        state.withLock { s in
            var e = e
            if e.event == "gathered" {
                let now = Dictionary(e.added.map { ($0.itemID, $0) }, uniquingKeysWith: { $1 })
                guard s.gathered else {
                    s.gathered = true
                    s.results = now
                    return .didFinishGathering(e.added)
                }
                // Gathered again (a daemon that came back): what differs is an update. While
                // paused it is measured against what the program will have once it resumes.
                var seen = s.results
                for i in s.held.added.values { seen[i.itemID] = i }
                for i in s.held.changed.values { seen[i.itemID] = i }
                for id in s.held.removed.keys { seen[id] = nil }
                e = QueryEventLine(event: "update", added: now.values.filter { seen[$0.itemID] == nil },
                                   changed: now.values.filter { item in seen[item.itemID].map { old in old != item } ?? false },
                                   removed: seen.values.filter { now[$0.itemID] == nil })
                guard !(e.added.isEmpty && e.changed.isEmpty && e.removed.isEmpty) else { return nil }
            }
            guard s.paused else {
                for i in e.added + e.changed { s.results[i.itemID] = i }
                for i in e.removed { s.results[i.itemID] = nil }
                return .didUpdate(added: e.added, changed: e.changed, removed: e.removed)
            }
            for i in e.added {
                // Removed and back while paused: to the program it changed.
                if s.held.removed.removeValue(forKey: i.itemID) != nil { s.held.changed[i.itemID] = i } else { s.held.added[i.itemID] = i }
            }
            for i in e.changed {
                if s.held.added[i.itemID] != nil { s.held.added[i.itemID] = i } else { s.held.changed[i.itemID] = i }
            }
            for i in e.removed {
                if s.held.added.removeValue(forKey: i.itemID) == nil { s.held.removed[i.itemID] = i }
                s.held.changed[i.itemID] = nil
            }
            return nil
        }
    }

    /// `take` of a daemon event given by its parts.
    func take(event: String, added: [MetadataItem], changed: [MetadataItem], removed: [MetadataItem]) async -> Notification? {
        await take(QueryEventLine(event: event, added: added, changed: changed, removed: removed))
    }

    /// The updates held while paused, as one (nil when there were none).
    func release() -> Notification? {
        state.withLock { s in
            let h = s.held
            s.held = ([:], [:], [:])
            guard !h.added.isEmpty || !h.changed.isEmpty || !h.removed.isEmpty else { return nil }
            for i in h.added.values { s.results[i.itemID] = i }
            for i in h.changed.values { s.results[i.itemID] = i }
            for id in h.removed.keys { s.results[id] = nil }
            return .didUpdate(added: Array(h.added.values), changed: Array(h.changed.values), removed: Array(h.removed.values))
        }
    }
}

/// A value behind a lock.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
