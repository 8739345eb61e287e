import Foundation
import UbiqCore
import UbiqDaemonProtocol

/// What one run of transfers has done, from the first transfer after the engine was idle until
/// it is idle again (#44 row 3: a batch of 10,000 uploads showed `0%` for its whole 3.5 s, and
/// downloads counted 1281 → 2215 → 1000 → 2446 as rounds were planned). Finished transfers are
/// counted as they end; the totals `status` reports are what is finished plus what remains, and
/// never fall while the run lasts.
struct TransferSession: Sendable {
    struct Side: Sendable {
        var files = 0
        var bytes: Int64 = 0
        /// The largest total reported so far (files, bytes).
        var mostFiles = 0
        var mostBytes: Int64 = 0
    }
    var up = Side()
    var down = Side()
    /// The items whose transfers ended in this run: the plan still lists them until the next
    /// round, and they are not to be counted as queued again.
    private(set) var endedItems: Set<ItemID> = []

    /// A transfer ended (done or given up: either way it is no longer to do).
    mutating func ended(_ id: ItemID, _ t: Transfer) {
        endedItems.insert(id)
        if t.direction == .up { up.files += 1; up.bytes += t.bytesTotal } else { down.files += 1; down.bytes += t.bytesTotal }
    }

    /// `now` (running and queued) with what this run finished added, totals kept from falling.
    mutating func report(_ now: EngineStatus.Transfers, up isUp: Bool) -> EngineStatus.Transfers {
        var side = isUp ? up : down
        var out = now
        out.done = side.files
        out.bytesDone += side.bytes
        side.mostFiles = max(side.mostFiles, side.files + now.running + now.queued)
        side.mostBytes = max(side.mostBytes, now.bytesTotal + side.bytes)
        out.filesTotal = side.mostFiles
        out.bytesTotal = side.mostBytes
        if isUp { up = side } else { down = side }
        return out
    }
}
