import Foundation

/// Slows password guessing: after `maxFailures` failed logins for one user within `window`,
/// further attempts for that user are refused until the window has passed.
actor LoginThrottle {
    let maxFailures: Int
    let window: TimeInterval
    private var failures: [String: [Date]] = [:]

    init(maxFailures: Int = 10, window: TimeInterval = 60) {
        self.maxFailures = maxFailures
        self.window = window
    }

    func isBlocked(_ user: String, now: Date) -> Bool {
        let recent = (failures[user] ?? []).filter { now.timeIntervalSince($0) < window }
        failures[user] = recent.isEmpty ? nil : recent
        return recent.count >= maxFailures
    }

    func recordFailure(_ user: String, now: Date) {
        if failures.count > 100_000 { failures.removeAll() }
        failures[user, default: []].append(now)
    }

    func recordSuccess(_ user: String) { failures[user] = nil }
}
