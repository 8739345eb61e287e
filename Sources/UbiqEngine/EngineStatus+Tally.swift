import Foundation
import UbiqCore
import UbiqDaemonProtocol

/// A transfer in progress, for status and (later) the live query.
struct Transfer: Sendable {
    enum Direction { case up, down }
    var direction: Direction
    var bytesDone: Int64
    var bytesTotal: Int64
}

extension EngineStatus {
    /// Uploads and downloads as `status` reports them: transfers running (with their bytes so
    /// far) and operations queued (`size` gives a queued transfer's bytes; nil: not a transfer).
    static func tally<R: Sequence<Transfer>>(running: R, queued: [SyncOp], size: (SyncOp) -> Int64?) -> (up: Transfers, down: Transfers) {
        var up = Transfers(), down = Transfers()
        for t in running {
            if t.direction == .up { up.running += 1; up.bytesDone += t.bytesDone; up.bytesTotal += t.bytesTotal } else {
                down.running += 1; down.bytesDone += t.bytesDone; down.bytesTotal += t.bytesTotal
            }
        }
        for op in queued {
            guard let n = size(op) else { continue }
            if case .upload = op { up.queued += 1; up.bytesTotal += n } else { down.queued += 1; down.bytesTotal += n }
        }
        return (up, down)
    }
}
