import UbiqCore
import UbiqDaemonProtocol

/// What the plan has queued to move, as totals kept up to date (#42): `status` counted the
/// plan's steps one by one with three look-ups each, and in a first sync of 1,000,000 files —
/// every step a transfer — that was most of what the engine did between batches (the
/// benchmark asks every 200 ms, the front end every second). Set once per plan (O(steps)),
/// an item taken out when its transfer ends (O(1)); a report subtracts what is running now.
struct QueuedTransfers {
    private var byItem: [ItemID: (up: Bool, bytes: Int64)] = [:]
    private var up = (files: 0, bytes: Int64(0)), down = (files: 0, bytes: Int64(0))

    init() {}

    /// The transfers among `ops` (`size`: a transfer's bytes; nil: not a transfer), leaving out
    /// `ended` ones (finished this run; the plan still lists them until the next round).
    init(_ ops: [SyncOp], ended: Set<ItemID>, size: (SyncOp) -> Int64?) {
        byItem.reserveCapacity(ops.count)
        for op in ops where !ended.contains(op.item) {
            guard let n = size(op) else { continue }
            if case .upload = op { add(op.item, up: true, n) } else { add(op.item, up: false, n) }
        }
    }

    private mutating func add(_ id: ItemID, up isUp: Bool, _ n: Int64) {
        remove(id)
        byItem[id] = (isUp, n)
        if isUp { up.files += 1; up.bytes += n } else { down.files += 1; down.bytes += n }
    }

    /// `id`'s transfer is no longer queued (it ended).
    mutating func remove(_ id: ItemID) {
        guard let (isUp, n) = byItem.removeValue(forKey: id) else { return }
        if isUp { up.files -= 1; up.bytes -= n } else { down.files -= 1; down.bytes -= n }
    }

    /// Queued uploads and downloads, leaving out those of `running` (listed as running instead).
    func tally(excluding running: some Sequence<ItemID>) -> (up: EngineStatus.Transfers, down: EngineStatus.Transfers) {
        var u = up, d = down
        for id in running {
            guard let (isUp, n) = byItem[id] else { continue }
            if isUp { u.files -= 1; u.bytes -= n } else { d.files -= 1; d.bytes -= n }
        }
        var upOut = EngineStatus.Transfers(), downOut = EngineStatus.Transfers()
        upOut.queued = u.files; upOut.bytesTotal = u.bytes
        downOut.queued = d.files; downOut.bytesTotal = d.bytes
        return (upOut, downOut)
    }
}
