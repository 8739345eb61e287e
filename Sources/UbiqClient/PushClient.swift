import Foundation
import HTTPTypes
import Logging
import UbiqCore
import UbiqProtocol
import WSClient

extension UbiqAPIClient {
    /// Opens the push channel and calls `onMessage` for each message (the first is `hello`) until
    /// the connection closes or the task is cancelled.
    public func listen(logger: Logger = Logger(label: "ubiq.push"), onMessage: @escaping @Sendable (PushMessage) async -> Void) async throws {
        guard let token else { throw ClientError(.unauthorized, "not signed in") }
        let wsURL = (baseURL.hasPrefix("https://") ? "wss://" + baseURL.dropFirst(8) : "ws://" + baseURL.dropFirst(7)) + "/v1/push"
        var config = WebSocketClientConfiguration()
        config.additionalHeaders = [.authorization: "Bearer \(token)"]
        config.maxFrameSize = 1 << 16
        config.autoPing = .enabled(timePeriod: .seconds(20))
        let decoder = WireCoding.decoder()
        do {
            let host = URL(string: baseURL)?.host ?? ""
            let tls = try baseURL.hasPrefix("https://") ? ServerTrust.pushTLS(host: host, trusting: trusted) : nil
            // A TLS server name cannot be an IP address (and is not checked then: see `pushTLS`).
            if ServerTrust.isIPAddress(host) { config.sniHostname = "ubiquity-server.invalid" }
            try await WebSocketClient.connect(url: wsURL, configuration: config, tlsConfiguration: tls, logger: logger) { inbound, _, _ in
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    guard case .text(let text) = message, let m = try? decoder.decode(PushMessage.self, from: Data(text.utf8)) else { continue }
                    await onMessage(m)
                }
            }
        } catch is CancellationError {
            return
        } catch {
            throw ClientError(.serverUnreachable, "push channel to \(baseURL) failed: \(Self.reason(error))")
        }
    }
}
