import Foundation
import UbiqCore
import UbiqDaemonProtocol

/// What became of items' steps, recorded in one place: the failures `status` and listings show
/// (with their retry delays, see `ItemBackoff`), and the versions this device committed and then
/// stopped sending content for. Pure: the caller passes the time and keeps `abandonedText` in
/// the state database when an answer says it changed.
final class ItemOutcomes {
    /// Each failing item's message (noted in the change log: live queries show it).
    private(set) var errors: TrackedMap<String>
    private(set) var backoff = ItemBackoff()
    /// Versions this device committed whose content it stopped sending (the file changed or
    /// went away meanwhile), kept until the server no longer has them current.
    private(set) var abandoned: Set<VersionID>

    init(log: ChangeLog, abandonedText: String?) {
        errors = TrackedMap(log: log)
        abandoned = Set((abandonedText ?? "").split(separator: ",").compactMap { VersionID(string: String($0)) })
    }

    /// The state database's form of `abandoned` (nil when empty).
    var abandonedText: String? { abandoned.isEmpty ? nil : abandoned.map(\.description).sorted().joined(separator: ",") }

    /// An item's step failed.
    func failed(_ id: ItemID, code: String, message: String, now: ContinuousClock.Instant, wall: Date) {
        errors[id] = "\(message) [\(code)]"
        backoff.failed(id, code: code, message: message, now: now, wall: wall)
    }

    /// An item's step succeeded: its error and backoff are gone.
    func succeeded(_ id: ItemID) {
        if errors[id] != nil { errors[id] = nil }
        backoff.succeeded(id)
    }

    /// The plan without the steps of items waiting out a backoff, and when the first of them may
    /// be tried. An item due for a retry that the plan no longer touches has come right (another
    /// device's version arrived, the file was removed): its error is over. Entries of items no
    /// tree knows (`known`) are dropped.
    func withoutWaiting(_ ops: [SyncOp], now: ContinuousClock.Instant, known: (ItemID) -> Bool) -> (ops: [SyncOp], nextRetry: ContinuousClock.Instant?) {
        guard !backoff.entries.isEmpty else { return (ops, nil) }
        for id in backoff.entries.keys where !known(id) { succeeded(id) }
        let planned = Set(ops.map(\.item))
        for id in backoff.entries.keys where !planned.contains(id) && !backoff.waiting(id, now: now) { succeeded(id) }
        return (ops.filter { !backoff.waiting($0.item, now: now) }, backoff.nextRetry)
    }

    /// Ends the waits of the failing items among `ids` (all failing items when nil); how many.
    func retryNow(_ ids: [ItemID]?, now: ContinuousClock.Instant) -> Int {
        (ids ?? Array(backoff.entries.keys)).filter { backoff.retryNow($0, now: now) }.count
    }

    /// Notes a version whose content this device stopped sending.
    func abandon(_ v: VersionID) { abandoned.insert(v) }

    /// The abandoned versions still some item's unfinished current version on the server
    /// (`unfinished`); the others are forgotten. `changed`: `abandonedText` is new.
    func currentAbandoned(unfinished: (VersionID) -> Bool) -> (versions: Set<VersionID>, changed: Bool) {
        guard !abandoned.isEmpty else { return ([], false) }
        let current = abandoned.filter(unfinished)
        guard current.count != abandoned.count else { return (current, false) }
        abandoned = current
        return (current, true)
    }

    /// Items whose last step failed, for `status` (`errors`), by path.
    func errorList(path: (ItemID) -> RelativePath?) -> [EngineStatus.ItemError] {
        backoff.entries.map { id, e in
            EngineStatus.ItemError(path: path(id)?.string ?? id.description, code: e.code, message: e.message, since: e.since, attempts: e.attempts)
        }.sorted { $0.path < $1.path }
    }
}
