import Foundation
import Logging
import ServiceLifecycle
import UbiqCore
import UbiqProtocol
import UbiqStorage

/// Carries push notifications to the other servers of a shared database, whose devices would
/// otherwise hear of a change only when they next ask.
public protocol PushRelay: Sendable {
    /// Tells the other servers of `message` for `account`'s devices.
    func send(account: Int64, _ message: PushMessage) async
    /// Hands `deliver` what the other servers send, until the calling task is cancelled.
    func run(_ deliver: @escaping @Sendable (Int64, PushMessage) async -> Void) async
}

/// `PushRelay` over PostgreSQL's LISTEN/NOTIFY (channel `ubiq_push`): each message names the
/// server that sent it (which ignores its own) and the account.
public struct PostgreSQLPushRelay: PushRelay {
    static let channel = "ubiq_push"
    let database: PostgreSQLDatabase
    let server = UUID().uuidString
    let logger: Logger

    public init(database: PostgreSQLDatabase, logger: Logger = Logger(label: "ubiq.push")) {
        self.database = database
        self.logger = logger
    }

    struct Envelope: Codable {
        let s: String
        let a: Int64
        let m: PushMessage
    }

    public func send(account: Int64, _ message: PushMessage) async {
        guard let data = try? JSONEncoder().encode(Envelope(s: server, a: account, m: message)) else { return }
        do {
            try await database.notify(Self.channel, String(decoding: data, as: UTF8.self))
        } catch {
            logger.warning("cannot tell the other servers of a change (their devices see it when they next ask): \(error)")
        }
    }

    public func run(_ deliver: @escaping @Sendable (Int64, PushMessage) async -> Void) async {
        let me = server
        let logger = self.logger
        await database.listen(Self.channel, resumed: {
            logger.notice("listening to the other servers again (changes made meanwhile reach devices when they next ask)")
        }, deliver: { payload in
            // From the database, so any client of it could have sent it: read it warily.
            guard payload.utf8.count <= 8000, let e = try? JSONDecoder().decode(Envelope.self, from: Data(payload.utf8)), e.s != me else { return }
            await deliver(e.a, e.m)
        })
    }
}

/// Runs the relay beside the server: what other servers send reaches this server's devices.
struct PushRelayService: Service {
    let services: ServerServices

    func run() async {
        guard let relay = services.relay else { return }
        let push = services.push
        await cancelWhenGracefulShutdown {
            await relay.run { account, message in await push.publish(account: account, message) }
        }
    }
}
