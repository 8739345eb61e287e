import Foundation
import UbiqCore
import UbiqProtocol

/// Fans change notifications out to the connected devices of each account.
/// A later multi-process store (PostgreSQL) feeds it from LISTEN/NOTIFY instead of in-process calls.
public actor PushHub {
    struct Subscriber {
        let device: DeviceID
        let continuation: AsyncStream<PushMessage>.Continuation
    }

    private var subscribers: [Int64: [UUID: Subscriber]] = [:]

    public init() {}

    /// Most push channels one account may hold open (#45 row 3: one account's thousand channels,
    /// each re-reading its token every 5 s, were the whole server's).
    public static let perAccount = 128

    /// Registers a connection; the stream yields every message for the account until
    /// `unsubscribe`. Nil when the account already holds `limit` channels.
    func subscribe(account: Int64, device: DeviceID, limit: Int = PushHub.perAccount) -> (UUID, AsyncStream<PushMessage>)? {
        guard (subscribers[account]?.count ?? 0) < limit else { return nil }
        let id = UUID()
        let (stream, continuation) = AsyncStream<PushMessage>.makeStream(bufferingPolicy: .bufferingNewest(256))
        subscribers[account, default: [:]][id] = Subscriber(device: device, continuation: continuation)
        return (id, stream)
    }

    func unsubscribe(account: Int64, id: UUID) {
        subscribers[account]?[id]?.continuation.finish()
        subscribers[account]?[id] = nil
    }

    /// Ends every connection of one device (its access was revoked).
    public func disconnect(account: Int64, device: DeviceID) {
        guard let subs = subscribers[account] else { return }
        for (id, s) in subs where s.device == device {
            s.continuation.finish()
            subscribers[account]?[id] = nil
        }
    }

    /// Sends `message` to every connection of the account.
    public func publish(account: Int64, _ message: PushMessage) {
        for s in subscribers[account]?.values ?? [:].values { s.continuation.yield(message) }
    }

    /// Number of open connections (for tests and status).
    public func connectionCount(account: Int64) -> Int { subscribers[account]?.count ?? 0 }
}
