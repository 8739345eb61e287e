import Foundation
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine

/// Runs a ``DeviceRequest`` for a home: through the daemon's socket when one runs, else with
/// an engine opened in-process for the duration of the command (after one look at the server
/// and the folder).
enum DeviceSession {
    /// - Parameter live: run the in-process engine like a daemon (watching the folder and the
    ///   push channel) for requests that stream until stopped.
    static func perform(_ home: HomeOption, _ request: DeviceRequest, live: Bool = false,
                        onEvent: @escaping @Sendable (DeviceResponse) -> Bool = { _ in true }) async throws -> DeviceResponse {
        let (h, config) = try home.config()
        guard let lock = try HomeLock.acquire(h) else {
            return try await DaemonAnswer.ask(h, explicitHome: home.home, request, container: config.container, onEvent: onEvent)
        }
        let device = try DeviceRuntime(home: h, config: config, settleTime: .milliseconds(500))
        if live { await device.start() } else { await device.refresh() }
        let r = await device.service.handle(request) { onEvent($0) }
        await device.stop()
        withExtendedLifetime(lock) {}
        return r
    }

    /// Like ``perform(_:_:onEvent:)`` but a failed answer becomes a one-line error (exit 1).
    static func require(_ home: HomeOption, _ request: DeviceRequest) async throws -> DeviceResponse {
        let r = try await perform(home, request)
        guard r.ok else { throw CLIError(.invalidRequest, r.message ?? "failed") }
        return r
    }
}
