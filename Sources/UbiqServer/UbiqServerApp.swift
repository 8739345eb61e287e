import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import UbiqCore
import UbiqStorage

/// Builds and runs the HTTP + WebSocket server.
public enum UbiqServerApp {
    /// The application: API routes plus the push channel, answering errors as JSON.
    /// `onRunning` receives the bound port (useful with port 0). A connection whose first
    /// request head has not arrived within `headTimeout` is closed, and at once when the server
    /// stops (see `SilentConnectionGuarded`). A kept-alive connection that sends nothing for
    /// `idleTimeout` between requests (or in the middle of one's body) is closed too; the
    /// default is twice the time our own clients keep an idle connection, so they always close
    /// first and never send a request on a connection being closed. The push channel, once
    /// upgraded to a WebSocket, is never closed for being idle, but it is pinged every `pushPing`
    /// and closed when no pong comes. A request body that sends less than `bodyRate` is cut off.
    /// With `tls` it serves HTTPS
    /// (and the push channel over `wss://`) only. Past `maxConnections` open connections (or
    /// `maxConnectionsPerAddress` from one address, a quarter of them by default), a new
    /// one is closed at once.
    public static func make(services: ServerServices, host: String, port: Int, logger: Logger,
                            headTimeout: Duration = .seconds(30), idleTimeout: Duration = .seconds(120), maxConnections: Int = 1000,
                            maxConnectionsPerAddress: Int? = nil, bodyRate: BodyRate = BodyRate(), pushPing: Duration = .seconds(30),
                            tls: TLSConfiguration? = nil,
                            onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some ApplicationProtocol {
        let router = Router(context: UbiqRequestContext.self)
        router.middlewares.add(RequestLogMiddleware(logger: logger))  // outermost: sees the answers errors became
        router.middlewares.add(ErrorMiddleware())
        router.get("/v1/health") { _, _ in "ok" }
        // Each route group gets only what it uses, composed here once.
        let auth = services.auth, publisher = services.publisher, collector = services.collector, clock = services.clock
        AccountRoutes(auth: auth, metadata: services.metadata, admin: services.admin, logins: services.logins, push: services.push, peers: services.peers,
                      publisher: publisher, clock: clock)
            .add(to: router)
        ChunkRoutes(auth: auth, metadata: services.metadata, chunks: services.chunks, quota: services.quota, collector: collector,
                    arrivals: services.arrivals, clock: clock).add(to: router)
        ItemRoutes(auth: auth, metadata: services.metadata, publisher: publisher, collector: collector, clock: clock).add(to: router)
        KeyValueRoutes(auth: auth, keyValues: services.keyValues, accountKeys: services.metadata, publisher: publisher, clock: clock).add(to: router)
        AdminRoutes(adminToken: services.adminToken, collector: collector).add(to: router)
        PeerRoutes(auth: auth, admin: services.admin, peers: services.peers, ring: (services.chunks as? SealedChunkStore)?.ring, clock: clock)
            .add(to: router)
        let wsRouter = Router(context: BasicWebSocketRequestContext.self)
        wsRouter.middlewares.add(ErrorMiddleware())
        PushRoutes(auth: auth, push: services.push, perAccount: services.pushChannelsPerAccount).add(to: wsRouter)
        let webSocketResponder = wsRouter.buildResponder()
        let timeout = TimeAmount(headTimeout)
        let connections = ConnectionCount(limit: maxConnections, perAddress: maxConnectionsPerAddress)
        // A push channel is pinged every `pushPing`; one that does not answer by the next ping is closed.
        let ws = WebSocketServerConfiguration(autoPing: .enabled(timePeriod: pushPing))
        let plain = HTTPServerBuilder { responder in
            SilentConnectionGuarded(inner: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder,
                                                                       configuration: .init(http1: .init(additionalChannelHandlers: [SlowBodyCloser(rate: bodyRate)],
                                                                                                         idleTimeout: TimeAmount(idleTimeout)), ws: ws)),
                                    headTimeout: timeout, connections: connections)
        }
        // TLS first on the connection, so the guard reads the decrypted request head.
        return Application(
            router: router,
            server: try tls.map { try .tls(plain, tlsConfiguration: $0) } ?? plain,
            configuration: .init(address: .hostname(host, port: port), serverName: "ubiq"),
            // (A service that returns stops the server: the relay runs only where there is one.)
            services: [TrashPurger(services: services, logger: logger), GarbageCollectorService(services: services, logger: logger),
                       PushTokenWatch(push: services.push, metadata: services.metadata, logger: logger)]
                + (services.relay == nil ? [] : [PushRelayService(services: services)]),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }
}
