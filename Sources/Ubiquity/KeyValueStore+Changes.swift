import Foundation
import UbiqEngine

extension KeyValueStore {
    /// Changes made on other devices — and the first sync, writes the server refused for the
    /// store's limits, another account — with the reason and the keys, from the moment the
    /// stream starts (`ready` is called then: a change made after it is reported).
    ///
    /// The stream outlives the daemon: when it stops (a restart, a sign-out) the stream waits
    /// for one to answer again (looking every `retry`), then reports what changed meanwhile —
    /// `accountChange` with every key whose value differs when the device is now signed in to
    /// another account (as `NSUbiquitousKeyValueStoreAccountChange`: the values are the new
    /// account's), else `serverChange`. Throws when no daemon answers at the start or the
    /// store is refused; ends when the consuming task stops iterating.
    public func changes(ready: (@Sendable () -> Void)? = nil, retry: Duration = .seconds(1)) -> AsyncThrowingStream<Change, Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                let seen = Locked<Seen?>(nil)
                // The keys an account change just reported: the new account's first sync is that same news.
                let covered = Locked<Set<String>>([])
                while !Task.isCancelled {
                    let connected = Locked(false)
                    do {
                        _ = try await ask(.kvWatch(local: nil)) { r in
                            if r.ready == true {
                                connected.withLock { $0 = true }
                                // Listening again: report what changed while nobody listened.
                                if let now = try? await self.seen(), let before = seen.withLock({ l in defer { l = now }; return l }) {
                                    if now.identity != before.identity {
                                        let keys = Self.differing(before.values, now.values)
                                        covered.withLock { $0 = Set(keys) }
                                        continuation.yield(Change(reason: .accountChange, keys: keys))
                                    } else if case let keys = Self.differing(before.values, now.values), !keys.isEmpty {
                                        continuation.yield(Change(reason: .serverChange, keys: keys))
                                    }
                                } else {
                                    ready?()
                                }
                            }
                            if let c = r.kvChange, let reason = Reason(rawValue: c.reason.rawValue) {
                                let told = covered.withLock { l in defer { l = [] }; return reason == .initialSyncChange && Set(c.keys).isSubset(of: l) }
                                if !told { continuation.yield(Change(reason: reason, keys: c.keys)) }
                                if let now = try? await self.seen() { seen.withLock { $0 = now } }
                            }
                            return !Task.isCancelled
                        }
                    } catch let e as UbiquityError where seen.withLock({ $0 != nil }) && [.noDaemon, .brokenAnswer].contains(e.code) {
                        // The daemon went away after the stream began: wait for one below.
                    } catch {
                        if seen.withLock({ $0 == nil }) && !connected.withLock({ $0 }) { continuation.finish(throwing: error); return }
                    }
                    if Task.isCancelled { break }
                    try? await Task.sleep(for: retry)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// What a stream last knew: whose store it was and its values.
    struct Seen: Sendable {
        let identity: String
        let values: [String: KVValue]
    }

    func seen() async throws -> Seen {
        let container = try storeContainer()
        return Seen(identity: try await ubiquity.hello(container: container).identity, values: try await dictionaryRepresentation())
    }

    /// The keys whose value is not the same in both (sorted).
    static func differing(_ a: [String: KVValue], _ b: [String: KVValue]) -> [String] {
        Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.sorted()
    }
}
