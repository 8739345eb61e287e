import Foundation

extension KeyValueStore {
    /// Changes made on other devices — and the first sync, writes the server refused for the
    /// store's limits, another account — with the reason and the keys, from the moment the
    /// stream starts (`ready` is called then: a change made after it is reported).
    ///
    /// The stream outlives the daemon: when it stops (a restart, a sign-out) the stream waits
    /// for one to answer again (looking every `retry`), then reports what changed meanwhile —
    /// `accountChange` with every key whose value differs when the device is now signed in to
    /// another account (as `NSUbiquitousKeyValueStoreAccountChange`: every key of either
    /// account; the values are the new account's, and the new account's first sync is told as
    /// `accountChange` too), else `serverChange`. Throws when no daemon answers at the start or the
    /// store is refused; ends when the consuming task stops iterating.
    public func changes(ready: (@Sendable () -> Void)? = nil, retry: Duration = .seconds(1)) -> AsyncThrowingStream<Change, Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                let known = Locked<Seen?>(nil)
                // After another account: its first sync is part of that news (told as accountChange).
                let switched = Locked(false)
                let began = Locked(false)
                let quiet = KeyValueStore(storeID, ubiquity: ubiquity.waitingOnly)
                do {
                    try await ubiquity.follow(.kvWatch(local: nil), container: try storeContainer(), retry: retry, began: { began.withLock { $0 } }) { r in
                        if r.ready == true {
                            // Listening (again): report what changed while nobody listened.
                            if let now = await quiet.seenPatiently() {
                                let before = known.withLock { k in defer { k = now }; return k }
                                if let before, now.identity != before.identity {
                                    switched.withLock { $0 = true }
                                    // The store was replaced: every key of either account.
                                    let keys = Set(before.values.keys).union(now.values.keys).sorted()
                                    continuation.yield(Change(reason: .accountChange, keys: keys))
                                } else if let before, case let keys = Self.differing(before.values, now.values), !keys.isEmpty {
                                    continuation.yield(Change(reason: .serverChange, keys: keys))
                                }
                            }
                            if !began.withLock({ b in defer { b = true }; return b }) { ready?() }
                        }
                        if let c = r.kvChange, var reason = Reason(rawValue: c.reason.rawValue) {
                            if reason == .initialSyncChange && switched.withLock({ $0 }) { reason = .accountChange } else { switched.withLock { $0 = false } }
                            continuation.yield(Change(reason: reason, keys: c.keys))
                            // Keep what the stream knows: the changed keys only, unless many changed.
                            let before = known.withLock { $0 }
                            if let before, c.keys.count <= 16, let now = try? await quiet.seen(before, changing: c.keys) {
                                known.withLock { $0 = now }
                            } else if let now = try? await quiet.seen() {
                                known.withLock { $0 = now }
                            }
                        }
                        return !Task.isCancelled
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// What a stream last knew: whose store it was and its values.
    struct Seen: Sendable {
        let identity: String
        let values: [String: KVValue]
    }

    /// `seen()`, tried a few times (a daemon that has just started may not answer every request yet).
    func seenPatiently() async -> Seen? {
        for attempt in 0..<5 {
            if let s = try? await seen() { return s }
            if attempt < 4 { try? await Task.sleep(for: .milliseconds(100)) }
        }
        return nil
    }

    func seen() async throws -> Seen {
        let container = try storeContainer()
        return Seen(identity: try await ubiquity.hello(container: container).identity, values: try await dictionaryRepresentation())
    }

    /// `before` with the values of `keys` read again (same identity: the stream is connected).
    func seen(_ before: Seen, changing keys: [String]) async throws -> Seen {
        var values = before.values
        for key in keys { values[key] = try await value(forKey: key) }
        return Seen(identity: before.identity, values: values)
    }

    /// The keys whose value is not the same in both (sorted).
    static func differing(_ a: [String: KVValue], _ b: [String: KVValue]) -> [String] {
        Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.sorted()
    }
}
