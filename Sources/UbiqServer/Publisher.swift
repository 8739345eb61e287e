import Foundation
import UbiqCore
import UbiqProtocol
import UbiqStorage

/// Push messages to an account's devices: on this server's channels and, through the relay,
/// on the other servers' of a shared database.
struct Publisher: Sendable {
    let push: PushHub
    let relay: (any PushRelay)?

    /// Sends `message` to the account's devices on this server and, through the relay, on the
    /// others.
    func publish(account: Int64, _ message: PushMessage) async {
        await push.publish(account: account, message)
        await relay?.send(account: account, message)
    }

    /// Tells the account's devices that a container's change feed moved on to `cursor`.
    func notify(_ ctx: AuthContext, _ container: ContainerID, cursor: Int64) async {
        await publish(account: ctx.accountID, PushMessage(kind: .changes, container: container, cursor: cursor, origin: ctx.deviceID))
    }
}
