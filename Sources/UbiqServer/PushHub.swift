import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import UbiqCore
import UbiqProtocol
import UbiqStorage

/// Fans change notifications out to the connected devices of each account. A channel lasts as
/// long as the token it was opened with: a revocation through this server ends it at once
/// (`disconnect`), one made elsewhere within a look of `PushTokenWatch` — no channel reads
/// anything of its own, so an idle server with thousands of channels open does nothing.
/// A later multi-process store (PostgreSQL) feeds it from LISTEN/NOTIFY instead of in-process calls.
public actor PushHub {
    struct Subscriber {
        let device: DeviceID
        /// The hash of the token the channel was opened with: the channel lasts as long as it does.
        let token: String
        let continuation: AsyncStream<ByteBuffer>.Continuation
    }

    private var subscribers: [Int64: [UUID: Subscriber]] = [:]

    public init() {}

    /// Most push channels one account may hold open (#45 row 3: one account's thousand channels,
    /// each re-reading its token every 5 s, were the whole server's).
    public static let perAccount = 128

    /// Registers a connection; the stream yields every message for the account, as the JSON
    /// text sent on the channel (one buffer shared by every channel), until `unsubscribe`.
    /// Nil when the account already holds `limit` channels.
    func subscribe(account: Int64, device: DeviceID, token: String, limit: Int = PushHub.perAccount) -> (UUID, AsyncStream<ByteBuffer>)? {
        guard (subscribers[account]?.count ?? 0) < limit else { return nil }
        let id = UUID()
        let (stream, continuation) = AsyncStream<ByteBuffer>.makeStream(bufferingPolicy: .bufferingNewest(256))
        subscribers[account, default: [:]][id] = Subscriber(device: device, token: token, continuation: continuation)
        return (id, stream)
    }

    /// The token hashes the open channels were opened with.
    func tokens() -> [String] { Array(Set(subscribers.values.flatMap { $0.values.map(\.token) })) }

    /// Ends every channel whose token was among `checked` and is not in `live` (revoked since
    /// it opened, by this process or another); a channel opened since the look stays. Returns
    /// how many ended.
    @discardableResult
    func keepOnly(_ live: Set<String>, checked: Set<String>) -> Int {
        var ended = 0
        for (account, subs) in subscribers {
            for (id, s) in subs where checked.contains(s.token) && !live.contains(s.token) {
                s.continuation.finish()
                subscribers[account]?[id] = nil
                ended += 1
            }
        }
        return ended
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

    /// Sends `message` to every connection of the account: encoded once, whatever the number
    /// of channels (a JSON encoder per channel and message was most of a fan-out's time).
    public func publish(account: Int64, _ message: PushMessage) {
        guard let subs = subscribers[account], !subs.isEmpty else { return }
        let text = Self.text(message)
        for s in subs.values { s.continuation.yield(text) }
    }

    /// `message` as the JSON text a channel sends.
    static func text(_ message: PushMessage) -> ByteBuffer {
        ByteBuffer(bytes: (try? WireCoding.encoder().encode(message)) ?? Data())
    }

    /// The first message of every channel.
    static let hello = text(PushMessage(kind: .hello, cursor: 0))

    /// Number of open connections (for tests and status).
    public func connectionCount(account: Int64) -> Int { subscribers[account]?.count ?? 0 }
}

/// Every `interval`, one look at the tokens the open push channels were opened with (a few
/// statements for any number of channels): the channels of those revoked elsewhere — another
/// server of the database, `ubiq server device revoke` — end. (Each channel re-read its own
/// token every 5 s and before each message: 7 % of a core at 3,000 channels, idle.)
struct PushTokenWatch: Service {
    let push: PushHub
    let metadata: any MetadataStore
    let logger: Logger
    var interval: Duration = PushRoutes.pushRecheck

    func run() async {
        while !Task.isCancelled {
            do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) } } catch { return }
            await look()
        }
    }

    /// One look: ends the channels whose tokens went.
    func look() async {
        let held = await push.tokens()
        guard !held.isEmpty else { return }
        do {
            let live = try await metadata.liveTokens(among: held)
            let ended = await push.keepOnly(live, checked: Set(held))
            if ended > 0 { logger.info("closed \(Counted.of(ended, "push channel")) whose device was signed out") }
        } catch {
            logger.warning("cannot look for signed-out devices' push channels (looked again in \(interval)): \(error)")
        }
    }
}
