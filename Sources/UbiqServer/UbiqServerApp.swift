import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import UbiqCore

/// Builds and runs the HTTP + WebSocket server.
public enum UbiqServerApp {
    /// The application: API routes plus the push channel, answering errors as JSON.
    /// `onRunning` receives the bound port (useful with port 0).
    public static func make(services: ServerServices, host: String, port: Int, logger: Logger,
                            onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let router = Router(context: UbiqRequestContext.self)
        router.middlewares.add(ErrorMiddleware())
        router.get("/v1/health") { _, _ in "ok" }
        services.addAccountRoutes(to: router)
        services.addChunkRoutes(to: router)
        services.addItemRoutes(to: router)
        services.addKeyValueRoutes(to: router)
        let wsRouter = Router(context: BasicWebSocketRequestContext.self)
        wsRouter.middlewares.add(ErrorMiddleware())
        services.addPushRoutes(to: wsRouter)
        return Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: wsRouter),
            configuration: .init(address: .hostname(host, port: port), serverName: "ubiq"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }
}
