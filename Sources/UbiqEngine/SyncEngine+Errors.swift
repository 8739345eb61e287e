import Foundation
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol

extension SyncEngine {
    /// Records a failed step of an item: its message (listings, `status`) and its backoff.
    func failed(_ id: ItemID, error: Error) {
        let (code, message) = Transfers.describe(error)
        failed(id, code: code, message: message)
    }

    func failed(_ id: ItemID, code: String, message: String) {
        // The server's folders changed under a step (`item_changed`): the next round pulls first.
        if code == ErrorCode.itemChanged.rawValue { schedule(.pullFirst) }
        let instant = ContinuousClock.now
        outcomes.failed(id, code: code, message: message, now: instant, wall: now())
        // The next try is due after the item's delay: a pass then. (Only the next plan asked for
        // it before, and a round that ended on the failure makes none: the retry waited for the
        // 30 s periodic pass, 2 tries in 30 s where the delays promise 5. The more frequent
        // passes once made the long randomized runs lose files — 3 of 18 — through a walk that
        // raced a folder move, fixed in `scanLocal`; 0 of 14 since.)
        if let due = outcomes.backoff.entries[id]?.retryAt, due > instant { requestPass(after: due - instant) }
    }

    /// A step's error that is nobody's failure: the step was cancelled (paused or stopping), or
    /// the server is out of reach (the engine is marked offline). True for those: no item is
    /// marked failed and no retry delay starts.
    func endsWithoutFailure(_ error: Error) -> Bool {
        if Task.isCancelled { return true }
        guard let e = error as? ClientError, e.code == .serverUnreachable || e.code == .badResponse else { return false }
        markOffline(e.message)
        return true
    }

    /// An item's step succeeded: its error and backoff are gone.
    func succeeded(_ id: ItemID) { outcomes.succeeded(id) }

    /// The plan without the steps of items waiting out a backoff; asks for a pass when the first
    /// of them may be tried again.
    func withoutWaiting(_ ops: [SyncOp]) -> [SyncOp] {
        let now = ContinuousClock.now
        let (out, next) = outcomes.withoutWaiting(ops, now: now, known: trees.knows)
        if let next, next > now { requestPass(after: next - now) }
        return out
    }

    /// Notes a version whose content this device stopped sending.
    func noteAbandoned(_ v: VersionID) {
        outcomes.abandon(v)
        saveAbandoned()
    }

    /// The abandoned versions the server still has as an item's unfinished current version
    /// (the others are forgotten).
    func abandonedVersions() -> Set<VersionID> {
        guard !outcomes.abandoned.isEmpty else { return [] }
        let unfinished = Set(remote.values.compactMap { $0.node.uploaded ? nil : $0.node.version })
        let (current, changed) = outcomes.currentAbandoned(unfinished: unfinished.contains)
        if changed { saveAbandoned() }
        return current
    }

    private func saveAbandoned() {
        do { try store.setMeta("abandoned", outcomes.abandonedText) } catch { logger.warning("\(error)") }
    }
}

extension SyncEngine {
    /// What each tree says about the items at (or once at) `path`, one line each: for a
    /// support question ("why is this file not here?") and for the randomized tests' reports.
    public func diagnose(_ path: String) -> String {
        trees.diagnose(path) { id in "\(evicted.contains(id) ? " | evicted" : "")\(outcomes.errors[id].map { " | error \($0)" } ?? "")" }
    }
}
