import Foundation
import UbiqCore
import UbiqStorage

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

    enum Key: Hashable {
        case pair(String, String), address(String), user(String)

        /// The key as the servers of a shared database count it (`FailureLog`): hashed, so a
        /// name with any bytes in it (a NUL, which PostgreSQL's text refuses) is counted too.
        var text: String {
            let plain: String
            switch self {
            case .pair(let u, let a): plain = "p:\(u)\u{0}\(a)"
            case .address(let a): plain = "a:\(a)"
            case .user(let u): plain = "u:\(u)"
            }
            return ContentHash.of(Array(plain.utf8)).hex
        }
    }

    static func keys(user: String, address: String) -> [Key] { [.pair(user, address), .address(address), .user(user)] }

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

    /// Reserves an attempt for `user` from `address`; nil when it must be refused. `shared`: the
    /// failures every server of a shared database counted (this server's own among them, unless
    /// read before this server's latest were written: the larger count decides).
    func begin(user: String, address: String, now: Date, shared: [String: Int]? = nil) -> Ticket? {
        let keys = Self.keys(user: user, address: address)
        for k in keys {
            let recent = (failures[k] ?? []).filter { now.timeIntervalSince($0) < limits.window }
            failures[k] = recent.isEmpty ? nil : recent
            // The shared count may be older than a failure this server has just given its slot
            // back for (read before it was written): this server's own count is a floor.
            let failed = max(shared.map { $0[k.text] ?? 0 } ?? 0, recent.count)
            if failed + inFlight[k, default: 0] >= limit(k) { return nil }
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

/// What a login needs besides the accounts: the throttle (counted across a shared database's
/// servers when there is a failure log) and the password checks.
struct Logins: Sendable {
    let throttle: LoginThrottle
    let failureLog: (any FailureLog)?
    let passwordChecks: PasswordChecks
    let passwordRounds: Int

    /// The failures the servers of a shared database counted for a login's keys (nil: none
    /// shared, or the database did not answer — this server's own count decides then).
    func sharedFailures(user: String, address: String, now: Date) async -> [String: Int]? {
        guard let log = failureLog else { return nil }
        let keys = LoginThrottle.keys(user: user, address: address).map(\.text)
        return try? await log.recent(keys, since: now.addingTimeInterval(-throttle.limits.window))
    }

    /// Gives a login's slot back, and tells the other servers of a failure (or of a success,
    /// which forgets the user's failures from that address).
    func loginFinished(_ ticket: LoginThrottle.Ticket, success: Bool, now: Date) async {
        await throttle.finish(ticket, success: success, now: now)
        guard let log = failureLog else { return }
        if success {
            try? await log.clear(ticket.keys[0].text)
        } else {
            try? await log.record(ticket.keys.map(\.text), at: now, pruneBefore: now.addingTimeInterval(-throttle.limits.window))
        }
    }
}
