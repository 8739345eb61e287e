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
