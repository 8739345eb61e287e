import Dispatch
import Foundation
import UbiqCore

/// When a live query's next batch runs. The engine uses ``DispatchQueryScheduler``; tests can
/// use ``ImmediateQueryScheduler`` to get one batch per change.
public protocol QueryScheduler: Sendable {
    func schedule(after interval: Duration, _ work: @escaping @Sendable () -> Void)
}

/// Runs each batch at once.
public struct ImmediateQueryScheduler: QueryScheduler {
    public init() {}
    public func schedule(after interval: Duration, _ work: @escaping @Sendable () -> Void) { work() }
}

/// Runs each batch on a Dispatch queue after the interval.
public struct DispatchQueryScheduler: QueryScheduler {
    let queue: DispatchQueue
    public init(queue: DispatchQueue = DispatchQueue(label: "ubiq.query")) { self.queue = queue }
    public func schedule(after interval: Duration, _ work: @escaping @Sendable () -> Void) {
        let c = interval.components
        let nanos = Int(c.seconds) * 1_000_000_000 + Int(c.attoseconds / 1_000_000_000)
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanos), execute: work)
    }
}

/// A live metadata query over one engine, in the spirit of `NSMetadataQuery`: a gathering
/// phase ending with ``Notification/didFinishGathering(_:)``, then batched
/// ``Notification/didUpdate(_:)`` notifications carrying added, changed and removed items.
/// Results come from the engine's local state (no network) and include transfer progress.
public final class LiveQuery: @unchecked Sendable {
    public enum Notification: Sendable, Equatable {
        case didFinishGathering([MetadataItem])
        case didUpdate(QueryDiff)
    }

    public let definition: MetadataQueryDefinition
    public let interval: Duration
    let engine: SyncEngine
    let scheduler: QueryScheduler
    let now: @Sendable () -> Date

    private let lock = NSLock()
    private var state: QueryResults
    private var handler: (@Sendable (Notification) -> Void)?
    private var observer: UUID?
    private var scheduled = false, flushing = false, again = false, paused = false, stopped = false, gathered = false
    private var lastFlush = ContinuousClock.now
    private var generation: UInt64 = 0
    private var lastFull = ContinuousClock.now

    /// - Parameters:
    ///   - interval: how long changes are collected into one update (default 100 ms).
    ///   - now: the clock relative dates in the predicate are measured from.
    public init(engine: SyncEngine, definition: MetadataQueryDefinition, interval: Duration = .milliseconds(100),
                scheduler: QueryScheduler = DispatchQueryScheduler(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.engine = engine
        self.definition = definition
        self.interval = interval
        self.scheduler = scheduler
        self.now = now
        self.state = QueryResults(definition)
    }

    /// Gathers the first result set (delivered as `didFinishGathering`), then keeps the query
    /// live until ``stop()``.
    public func start(_ handler: @escaping @Sendable (Notification) -> Void) async {
        lock.withLock { self.handler = handler }
        let token = await engine.addObserver { [weak self] in self?.dirty() }
        let (gen, listingState) = await engine.snapshot()
        // Built here, not on the engine's queue; what the query leaves is dropped as it is made.
        let t = now(), definition = self.definition
        let snapshot = listingState.all(where: { definition.includes($0, now: t) })
        let results: [MetadataItem]? = lock.withLock {
            guard !stopped else { return nil }
            observer = token
            generation = gen
            lastFull = .now
            // Gathered from nothing, what it adds is every result, already in order (sorting
            // them again, as `state.ordered` does, doubled the time of a large gathering).
            let wasEmpty = state.byID.isEmpty
            let diff = state.reduce(snapshot, now: t)
            gathered = true
            return wasEmpty ? diff.added : state.ordered
        }
        guard let results else { await engine.removeObserver(token); return }
        handler(.didFinishGathering(results))
    }

    /// The current results, in the query's order.
    public var results: [MetadataItem] { lock.withLock { state.ordered } }

    /// Holds updates back (`disableUpdates`); changes made meanwhile arrive in one batch on resume.
    public func pause() { lock.withLock { paused = true } }

    /// Delivers what changed while paused, then continues (`enableUpdates`).
    public func resume() {
        lock.withLock { paused = false }
        dirty()
    }

    /// Ends the query; no notification is delivered afterwards.
    public func stop() async {
        let token: UUID? = lock.withLock {
            stopped = true
            handler = nil
            defer { observer = nil }
            return observer
        }
        if let token { await engine.removeObserver(token) }
    }

    /// Something in the engine changed: schedule one batch (coalesced). The first change after
    /// a quiet interval goes out at once; changes that follow within the interval are batched.
    func dirty() {
        let delay: Duration? = lock.withLock {
            guard !stopped, gathered, !paused else { return nil }
            if flushing { again = true; return nil }
            if scheduled { return nil }
            scheduled = true
            let since = ContinuousClock.now - lastFlush
            return since >= interval ? .zero : interval - since
        }
        if let delay { scheduler.schedule(after: delay) { [weak self] in Task { await self?.flush() } } }
    }

    func flush() async {
        let proceed: Bool = lock.withLock {
            scheduled = false
            guard !stopped, !paused, !flushing else { return false }
            flushing = true
            lastFlush = ContinuousClock.now
            return true
        }
        guard proceed else { return }
        // Only the items changed since the last batch are read again; everything when the
        // engine's log no longer reaches back, and each minute for predicates on relative dates.
        let since: UInt64 = lock.withLock { generation }
        let timeBound = definition.predicate.usesRelativeDates && ContinuousClock.now - lastFull > .seconds(60)
        var (gen, changes) = timeBound ? (since, nil) : await engine.changes(since: since)
        var snapshot: [MetadataItem]?
        let t = now(), definition = self.definition
        if changes == nil {
            let (g, listingState) = await engine.snapshot()
            gen = g
            snapshot = listingState.all(where: { definition.includes($0, now: t) })
        }
        let (diff, h, rerun): (QueryDiff, (@Sendable (Notification) -> Void)?, Bool) = lock.withLock {
            generation = gen
            let d: QueryDiff
            if let snapshot { d = state.reduce(snapshot, now: t); lastFull = .now } else { d = state.reduce(changes: changes ?? [], now: t) }
            flushing = false
            let r = again
            again = false
            return (d, handler, r)
        }
        if !diff.isEmpty { h?(.didUpdate(diff)) }
        if rerun { dirty() }
    }
}
