import Foundation
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol

extension SettingsReplica {
    /// Sends this device's unacknowledged writes, then applies every change from elsewhere
    /// (all pages first, so a multi-key set is applied and reported at once). Returns true
    /// when the server has everything written here and nothing newer is waiting.
    @discardableResult
    public func synchronize() async -> Bool {
        if syncing {
            syncAgain = true
            await withCheckedContinuation { syncWaiters.append($0) }
            return online && pending.isEmpty
        }
        syncing = true
        repeat {
            syncAgain = false
            await syncOnce()
        } while syncAgain
        syncing = false
        let w = syncWaiters
        syncWaiters.removeAll()
        for c in w { c.resume() }
        return online && pending.isEmpty
    }

    /// `ubiq rekey`: every value the server holds sealed with an older generation of the
    /// account's key is written again (the same value, a new stamp) and so sealed with the
    /// newest; returns how many. The replica is brought in step first, so a value written
    /// elsewhere is not written over with an older one.
    public func rekey() async throws -> Int {
        guard await synchronize() else { throw EngineError(.serverUnreachable, "the settings could not be brought in step: \(lastError ?? "offline")") }
        let keys = try await client.sealedWithAnOlderKey(storeID, known: entries.keys)
        var values: [String: KVValue?] = [:]
        for k in keys { if let v = entries[k]?.value { values[k] = v } }
        try setValues(values, origin: "rekey")
        guard await synchronize() else { throw EngineError(.serverUnreachable, "the settings sealed again could not be sent: \(lastError ?? "offline")") }
        return values.count
    }

    func syncOnce() async {
        do {
            let held = try await push()
            try await pull()
            online = true
            lastError = held
        } catch let e as ClientError where e.code == .serverUnreachable || e.code == .badResponse {
            online = false
            lastError = "offline: \(e.message)"
        } catch {
            online = false
            lastError = DeviceResponse.describe(error)
            logger.warning("key-value sync: \(lastError ?? "")")
        }
    }

    /// Sends the pending writes; returns why they wait, when the server refused them for a
    /// reason this device must fix (its clock), keeping them to send again.
    func push(restamped: Bool = false) async throws -> String? {
        guard !pending.isEmpty else { return nil }
        let batch = pending.sorted().compactMap { entries[$0] }
        do {
            try await client.set(storeID, batch)
            pending.removeAll()
            try state.save([], pending: pending, meta: [:])
        } catch let e as ClientError where e.code == .kvClockAhead {
            // Stamped by a clock that was (or is) wrong: stamp them again from the wall clock and
            // what came from elsewhere, and try once more; if the clock is still wrong they wait.
            if !restamped {
                try restampPending()
                return try await push(restamped: true)
            }
            logger.warning("key-value writes wait: \(e.message)")
            return "settings written here wait: \(e.message)"
        } catch let e as ClientError where [.kvTooManyKeys, .kvStoreTooLarge, .kvValueTooLarge, .kvKeyInvalid, .storageFull].contains(e.code) {
            // Together with other devices' writes the store would break a limit: these writes
            // are refused. Take the server's state back and say which keys changed.
            let refused = Set(batch.map(\.key))
            logger.warning("key-value writes refused by the server: \(e.message)")
            try await reloadAll()
            notify(.quotaViolationChange, refused)
        }
        return nil
    }

    /// Gives the pending writes new stamps from a clock that starts over at the latest stamp
    /// seen from other devices (so they still win over everything this device had seen) and
    /// the wall clock as it is now, forgetting stamps this device made with a wrong clock.
    func restampPending() throws {
        var clock = HybridLogicalClock(last: entries.values.filter { $0.device != device }.map(\.stamp).max() ?? .zero)
        var again: [KVEntry] = []
        for key in pending.sorted() {
            guard let e = entries[key] else { continue }
            again.append(KVEntry(key: key, value: e.value, stamp: clock.now(physicalMillis: physicalMillis()), device: device))
        }
        try state.save(again, pending: pending, meta: clockMeta(clock))
        for e in again { entries[e.key] = e }
        hlc = clock
    }

    /// Replaces the local view with the server's whole store (after refused writes).
    func reloadAll() async throws {
        let all = try await client.all(storeID, known: entries.keys)
        var clock = hlc
        var next: [String: KVEntry] = [:]
        for e in all.entries {
            clock.receive(e.stamp, physicalMillis: physicalMillis())
            next[e.key] = e
        }
        pending.removeAll()
        try state.save(Array(next.values), pending: [], meta: clockMeta(clock).merging(["cursor": String(all.cursor), "synced": "1", "account": account]) { $1 },
                       wipe: true)
        entries = next
        hlc = clock
        cursor = all.cursor
        syncedOnce = true
    }

    func pull() async throws {
        var incoming: [KVEntry] = []
        var c = cursor
        do {
            while true {
                let page = try await client.changes(storeID, after: c, known: entries.keys)
                incoming += page.entries
                c = page.cursor
                if !page.hasMore { break }
            }
        } catch let e as ClientError where e.code == .kvCursorExpired {
            // The server forgot deletes this device had not seen: take its whole store, and say
            // which keys changed (pending writes were sent just before; any still waiting stay).
            logger.info("key-value store reloaded: \(e.message)")
            let before = entries
            let waiting = pending.compactMap { k in entries[k].map { (k, $0) } }
            try await reloadAll()
            if !waiting.isEmpty {
                for (k, e) in waiting where entries[k].map({ e.wins(over: $0) }) ?? true { entries[k] = e; pending.insert(k) }
                try state.save(waiting.map(\.1), pending: pending, meta: [:])
            }
            let changed = Set(before.keys).union(entries.keys).filter { before[$0]?.value != entries[$0]?.value && entries[$0]?.device != device }
            notify(.serverChange, changed)
            return
        }
        guard c != cursor || !incoming.isEmpty || !syncedOnce else { return }
        var clock = hlc
        var changedHere: [KVEntry] = []
        var external = Set<String>()
        var newPending = pending
        for e in incoming {
            clock.receive(e.stamp, physicalMillis: physicalMillis())
            if let cur = entries[e.key], !e.wins(over: cur) { continue }
            changedHere.append(e)
            newPending.remove(e.key)
            if e.device != device { external.insert(e.key) }
        }
        let initial = !syncedOnce
        try state.save(changedHere, pending: newPending, meta: clockMeta(clock).merging(["cursor": String(c), "synced": "1"]) { $1 })
        for e in changedHere { entries[e.key] = e }
        pending = newPending
        hlc = clock
        cursor = c
        syncedOnce = true
        notify(initial ? .initialSyncChange : .serverChange, external)
    }
}
