import Foundation
import UbiqCore

/// Which items changed, in order, so a live query can re-read only those. Owned by the engine
/// (used on its control queue only); readers remember the generation they have seen.
final class ChangeLog {
    private(set) var generation: UInt64 = 0
    private var entries: [(gen: UInt64, id: ItemID)] = []
    /// Readers that last saw a generation below this must read everything.
    private var floor: UInt64 = 0
    let limit: Int
    /// Called on every change (live queries only note the fact and return).
    var observers: [UUID: @Sendable () -> Void] = [:]

    init(limit: Int = 100_000) { self.limit = limit }

    func note(_ id: ItemID) {
        generation += 1
        entries.append((generation, id))
        if entries.count > limit {
            entries.removeFirst(entries.count / 2)
            floor = entries[0].gen - 1
        }
        for o in observers.values { o() }
    }

    /// Everything may have changed.
    func noteAll() {
        generation += 1
        entries.removeAll()
        floor = generation
        for o in observers.values { o() }
    }

    /// Items changed after `gen`, or nil when the reader must read everything.
    func changes(since gen: UInt64) -> Set<ItemID>? {
        if gen < floor { return nil }
        var lo = 0, hi = entries.count
        while lo < hi { let mid = (lo + hi) / 2; if entries[mid].gen <= gen { lo = mid + 1 } else { hi = mid } }
        return Set(entries[lo...].map(\.id))
    }
}

/// A dictionary keyed by item ID that records every key it writes in a ``ChangeLog`` (and, for
/// maps something is derived from, in its own set of keys written since that was last read).
struct TrackedMap<Value>: Sequence {
    private(set) var storage: [ItemID: Value]
    let log: ChangeLog
    /// Keys written since ``takeWritten()``; nil when nobody derives anything from this map.
    private var written: Set<ItemID>?
    /// Every key was written since ``takeWritten()`` (the map was filled from empty).
    private var allWritten = false

    init(_ values: [ItemID: Value] = [:], log: ChangeLog, tracksWrites: Bool = false) {
        self.storage = values; self.log = log
        if tracksWrites { written = [] }
    }

    subscript(id: ItemID) -> Value? {
        get { storage[id] }
        set { storage[id] = newValue; log.note(id); written?.insert(id) }
    }

    /// Replaces the whole map, noting only the keys whose value differs.
    mutating func replace(with new: [ItemID: Value], same: (Value, Value) -> Bool) {
        if storage.isEmpty && !new.isEmpty {
            // Filled from empty (a first scan): everything changed, said once instead of per key.
            log.noteAll()
            if written != nil { allWritten = true; written = [] }
            storage = new
            return
        }
        for (id, v) in new where storage[id].map({ !same($0, v) }) ?? true { log.note(id); written?.insert(id) }
        for id in storage.keys where new[id] == nil { log.note(id); written?.insert(id) }
        storage = new
    }

    /// The keys written since the last call (empty if the map does not track writes); nil when
    /// every key was (whatever is derived is then better made again from the whole map).
    mutating func takeWritten() -> Set<ItemID>? {
        if allWritten { allWritten = false; written = []; return nil }
        guard let w = written, !w.isEmpty else { return [] }
        written = []
        return w
    }

    var keys: Dictionary<ItemID, Value>.Keys { storage.keys }
    var values: Dictionary<ItemID, Value>.Values { storage.values }
    var count: Int { storage.count }
    var isEmpty: Bool { storage.isEmpty }
    func makeIterator() -> Dictionary<ItemID, Value>.Iterator { storage.makeIterator() }
}
