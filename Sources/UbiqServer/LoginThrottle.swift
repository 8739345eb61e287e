import Foundation

/// Slows password guessing without letting a guesser lock a user out or stall the server.
///
/// An attempt takes a slot before its password is hashed and gives it back after (a burst of
/// parallel guesses is counted as it arrives, not after the hashing: 40 at once used to get 37
/// checked). Failures within `window` are counted per user name and address, per address, and
/// per user name from anywhere; an attempt is refused while any count (with the attempts in
/// flight) is at its limit. The per-user limit is well above the per-address ones, so guesses
/// from one place cannot lock the user out of every other place.
actor LoginThrottle {
    struct Limits: Sendable {
        var perUserAndAddress = 10
        var perAddress = 30
        var perUser = 100
        var window: TimeInterval = 60
    }

    enum Key: Hashable { case pair(String, String), address(String), user(String) }

    /// A reserved attempt, given back with `finish`.
    struct Ticket: Sendable { let keys: [Key] }

    let limits: Limits
    private var failures: [Key: [Date]] = [:]
    private var inFlight: [Key: Int] = [:]

    init(limits: Limits = Limits()) { self.limits = limits }

    func limit(_ key: Key) -> Int {
        switch key {
        case .pair: limits.perUserAndAddress
        case .address: limits.perAddress
        case .user: limits.perUser
        }
    }

    /// Reserves an attempt for `user` from `address`; nil when it must be refused.
    func begin(user: String, address: String, now: Date) -> Ticket? {
        let keys: [Key] = [.pair(user, address), .address(address), .user(user)]
        for k in keys {
            let recent = (failures[k] ?? []).filter { now.timeIntervalSince($0) < limits.window }
            failures[k] = recent.isEmpty ? nil : recent
            if recent.count + inFlight[k, default: 0] >= limit(k) { return nil }
        }
        for k in keys { inFlight[k, default: 0] += 1 }
        return Ticket(keys: keys)
    }

    /// Gives the slot back: a failure is counted; a success forgets the user's failures from
    /// that address.
    func finish(_ t: Ticket, success: Bool, now: Date) {
        for k in t.keys {
            let left = inFlight[k, default: 1] - 1
            inFlight[k] = left > 0 ? left : nil
        }
        if failures.count > 100_000 { failures.removeAll() }
        if success {
            failures[t.keys[0]] = nil
        } else {
            for k in t.keys { failures[k, default: []].append(now) }
        }
    }
}
