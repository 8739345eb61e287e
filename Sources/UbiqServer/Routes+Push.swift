import Foundation
import Hummingbird
import HummingbirdWebSocket
import ServiceLifecycle
import UbiqCore
import UbiqProtocol

/// `GET /v1/push`: the push channel of a signed-in device, closed when its token is revoked.
struct PushRoutes: Sendable {
    let auth: Authenticator
    let push: PushHub
    /// Most push channels one account may hold open.
    let perAccount: Int

    /// How often a quiet push channel checks that its token still holds.
    static let pushRecheck: Duration = .seconds(5)

    func stillSignedIn(_ request: Request) async -> Bool { (try? await auth.authenticate(request)) != nil }

    /// `GET /v1/push`: a WebSocket that sends a `hello`, then one JSON text message per change of the account.
    func add(to router: Router<BasicWebSocketRequestContext>) {
        router.ws("/v1/push") { request, _ in
            _ = try await self.auth.authenticate(request)
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            guard let ctx = try? await self.auth.authenticate(context.request) else { return }
            guard let (id, stream) = await self.push.subscribe(account: ctx.accountID, device: ctx.deviceID, limit: self.perAccount) else {
                // Over the account's cap: closed (the device falls back to polling the feed).
                try? await outbound.close(.policyViolation, reason: "too many push channels for this account")
                return
            }
            let encoder = WireCoding.encoder()
            do {
                // A server shutting down ends its push channels at once (devices reconnect to the next one).
                try await cancelWhenGracefulShutdown {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        // Reads (and drops) whatever the client sends; ends when it closes.
                        for try await _ in inbound.messages(maxSize: 1 << 16) {}
                    }
                    group.addTask {
                        let hello = PushMessage(kind: .hello, cursor: 0)
                        try await outbound.write(.text(String(decoding: try encoder.encode(hello), as: UTF8.self)))
                        for await message in stream {
                            // Nothing reaches a device whose access was revoked (by another
                            // process too: `ubiq server device revoke`).
                            guard await self.stillSignedIn(context.request) else { return }
                            try await outbound.write(.text(String(decoding: try encoder.encode(message), as: UTF8.self)))
                        }
                    }
                    group.addTask {
                        // A quiet channel is checked too, so a revoked device's socket closes soon.
                        while await self.stillSignedIn(context.request) {
                            try await Task.sleep(for: Self.pushRecheck)
                        }
                    }
                    try await group.next()
                    group.cancelAll()
                }
                }
            } catch {}
            await self.push.unsubscribe(account: ctx.accountID, id: id)
        }
    }
}
