import Foundation

/// Tells waiting chunk fetches that an account's uploads stored new chunks, so a device can
/// download a big file while another device is still uploading it (the fetch waits for the
/// chunks it asks for instead of failing). Per account: a counter of stored batches and the
/// fetches waiting for it to move.
actor ChunkArrivals {
    private var generation: [Int64: UInt64] = [:]
    private var waiters: [Int64: [UUID: CheckedContinuation<Void, Never>]] = [:]

    /// How many batches the account has stored so far (read before checking what is held).
    func current(account: Int64) -> UInt64 { generation[account] ?? 0 }

    /// Called after a batch of the account's chunks is durably stored and recorded.
    func arrived(account: Int64) {
        generation[account, default: 0] &+= 1
        for (_, c) in waiters.removeValue(forKey: account) ?? [:] { c.resume() }
    }

    /// Returns true as soon as the account has stored a batch after `seen`, false once `timeout`
    /// passes without one or the waiting request is cancelled (the server shutting down).
    func wait(account: Int64, after seen: UInt64, timeout: Duration) async -> Bool {
        if current(account: account) != seen { return true }
        let id = UUID()
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.expire(account: account, id: id)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                if Task.isCancelled { c.resume() } else { waiters[account, default: [:]][id] = c }
            }
        } onCancel: {
            timer.cancel()
            Task { await self.expire(account: account, id: id) }
        }
        timer.cancel()
        return current(account: account) != seen
    }

    private func expire(account: Int64, id: UUID) {
        if let c = waiters[account]?.removeValue(forKey: id) { c.resume() }
        if waiters[account]?.isEmpty == true { waiters[account] = nil }
    }
}
