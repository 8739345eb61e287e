/// A readers–writer gate for async code: any number of `shared` holders at once, or one
/// `exclusive` holder; a waiting exclusive holder goes before shared holders that come after it
/// (so a steady stream of uploads cannot starve garbage collection). FIFO within each kind.
actor AsyncGate {
    private var readers = 0
    private var writing = false
    private var waitingWriters: [CheckedContinuation<Void, Never>] = []
    private var waitingReaders: [CheckedContinuation<Void, Never>] = []

    func enterShared() async {
        if !writing && waitingWriters.isEmpty {
            readers += 1
            return
        }
        await withCheckedContinuation { waitingReaders.append($0) }  // counted by whoever wakes it
    }

    func leaveShared() {
        readers -= 1
        if readers == 0, !waitingWriters.isEmpty {
            writing = true
            waitingWriters.removeFirst().resume()
        }
    }

    func enterExclusive() async {
        if !writing && readers == 0 {
            writing = true
            return
        }
        await withCheckedContinuation { waitingWriters.append($0) }  // `writing` set by whoever wakes it
    }

    func leaveExclusive() {
        if !waitingWriters.isEmpty {
            waitingWriters.removeFirst().resume()
            return
        }
        writing = false
        readers += waitingReaders.count
        let woken = waitingReaders
        waitingReaders = []
        for c in woken { c.resume() }
    }
}

extension AsyncGate {
    /// Runs `body` as one of the shared holders.
    func shared<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        await enterShared()
        return try await leaving(body) { $0.leaveShared() }
    }

    /// Runs `body` as the only holder.
    func exclusive<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        await enterExclusive()
        return try await leaving(body) { $0.leaveExclusive() }
    }

    /// Runs `body`, then `leave`, whether `body` returned or threw.
    private func leaving<T: Sendable>(_ body: @Sendable () async throws -> T, _ leave: (isolated AsyncGate) -> Void) async throws -> T {
        do {
            let r = try await body()
            leave(self)
            return r
        } catch {
            leave(self)
            throw error
        }
    }
}
