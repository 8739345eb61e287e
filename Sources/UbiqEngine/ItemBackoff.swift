import Foundation
import UbiqCore

/// Per-item retry state: an item whose step failed is not tried again before its delay passes,
/// and the delay doubles with each failure in a row (0.5 s, 1 s, 2 s, … up to 5 minutes), so a
/// step that keeps failing costs a request every few minutes, not dozens a second. Pure: the
/// caller passes the time. What it holds is what `status` lists as `errors`.
struct ItemBackoff: Sendable {
    struct Entry: Sendable, Equatable {
        var code: String
        var message: String
        /// Wall-clock time of the first failure in this run of failures.
        var since: Date
        var attempts: Int
        var retryAt: ContinuousClock.Instant
    }

    static let first: Duration = .milliseconds(500)
    static let longest: Duration = .seconds(300)
    /// `item_changed` is the server saying "pull first": the next pull usually settles it, so its
    /// retries wait at most this long (still a request every few seconds at worst, not a loop).
    static let longestForNews: Duration = .seconds(2)

    private(set) var entries: [ItemID: Entry] = [:]

    /// The delay after `attempts` failures in a row.
    static func delay(afterAttempts attempts: Int) -> Duration {
        var d = first
        for _ in 1..<max(1, min(attempts, 20)) {
            d = d * 2
            if d >= longest { return longest }
        }
        return d
    }

    mutating func failed(_ id: ItemID, code: String, message: String, now: ContinuousClock.Instant, wall: Date) {
        var e = entries[id] ?? Entry(code: code, message: message, since: wall, attempts: 0, retryAt: now)
        e.attempts += 1
        e.code = code
        e.message = message
        let d = Self.delay(afterAttempts: e.attempts)
        e.retryAt = now + (code == ErrorCode.itemChanged.rawValue ? min(d, Self.longestForNews) : d)
        entries[id] = e
    }

    /// Forgets an item's failures; true if it had any.
    @discardableResult
    mutating func succeeded(_ id: ItemID) -> Bool { entries.removeValue(forKey: id) != nil }

    /// The user asked for the item to be tried again now (`ubiq retry`, `u`): its wait ends; its
    /// failures in a row still count, so failing again waits as long as it would have. True if
    /// it was failing.
    mutating func retryNow(_ id: ItemID, now: ContinuousClock.Instant) -> Bool {
        guard entries[id] != nil else { return false }
        entries[id]!.retryAt = min(entries[id]!.retryAt, now)
        return true
    }

    /// True while the item waits for its next try.
    func waiting(_ id: ItemID, now: ContinuousClock.Instant) -> Bool {
        guard let e = entries[id] else { return false }
        return e.retryAt > now
    }

    /// The earliest time an item may be tried again.
    var nextRetry: ContinuousClock.Instant? { entries.values.map(\.retryAt).min() }

    /// Drops the entries of items no tree knows any more.
    mutating func keep(only known: (ItemID) -> Bool) { entries = entries.filter { known($0.key) } }
}
