import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOWebSocket
import ServiceLifecycle
import UbiqCore
import UbiqProtocol

/// `GET /v1/push`: the push channel of a signed-in device, closed when its token is revoked.
struct PushRoutes: Sendable {
    let auth: Authenticator
    let push: PushHub
    /// Most push channels one account may hold open.
    let perAccount: Int

    /// How often the server looks for push channels whose token was revoked elsewhere
    /// (`PushTokenWatch`).
    static let pushRecheck: Duration = .seconds(5)

    /// `GET /v1/push`: a WebSocket that sends a `hello`, then one JSON text message per change of the account.
    func add(to router: Router<BasicWebSocketRequestContext>) {
        router.ws("/v1/push") { request, _ in
            _ = try await self.auth.authenticate(request)
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            guard let ctx = try? await self.auth.authenticate(context.request), let token = Authenticator.tokenHash(of: context.request) else { return }
            guard let (id, stream) = await self.push.subscribe(account: ctx.accountID, device: ctx.deviceID, token: token, limit: self.perAccount) else {
                // Over the account's cap: closed (the device falls back to polling the feed).
                try? await outbound.close(.policyViolation, reason: "too many push channels for this account")
                return
            }
            // A server shutting down ends its push channels at once (devices reconnect to the
            // next one): the hub ends the channel's stream, and the writing below with it. (No
            // `cancelWhenGracefulShutdown`: its two tasks a channel were a tenth of its memory.)
            await withGracefulShutdownHandler {
                do {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            // Reads (and drops) whatever the client sends; once it closes, the
                            // channel's stream ends, and with it the writing below.
                            do { for try await _ in inbound.messages(maxSize: 1 << 16) {} } catch {}
                            await self.push.unsubscribe(account: ctx.accountID, id: id)
                        }
                        // Writes here (no task of its own). Ends when the hub ends the channel:
                        // its token was revoked (at once through this server, within
                        // `pushRecheck` elsewhere), the client closed, or the server stops.
                        try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: PushHub.hello)))
                        for await text in stream { try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: text))) }
                        group.cancelAll()
                    }
                } catch {}
            } onGracefulShutdown: {
                Task { await self.push.unsubscribe(account: ctx.accountID, id: id) }
            }
            await self.push.unsubscribe(account: ctx.accountID, id: id)
        }
    }
}
