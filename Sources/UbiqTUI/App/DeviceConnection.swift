import Foundation
import UbiqEngine

/// How the front end reaches a device's engine: every call is a ``DeviceRequest`` (streams
/// deliver events through `emit`), answered in-process by a ``DeviceRuntime`` the front end
/// runs itself, or by a running daemon over its socket.
public struct DeviceConnection: Sendable {
    public let send: @Sendable (DeviceRequest, @escaping @Sendable (DeviceResponse) async -> Bool) async -> DeviceResponse
    /// A line for the header ("engine in this process" / "daemon").
    public let attachedToDaemon: Bool

    public init(attachedToDaemon: Bool,
                send: @escaping @Sendable (DeviceRequest, @escaping @Sendable (DeviceResponse) async -> Bool) async -> DeviceResponse) {
        self.attachedToDaemon = attachedToDaemon
        self.send = send
    }

    /// Requests without a stream.
    public func ask(_ request: DeviceRequest) async -> DeviceResponse { await send(request) { _ in true } }

    /// The engine runs in this process.
    public static func local(_ runtime: DeviceRuntime) -> DeviceConnection {
        DeviceConnection(attachedToDaemon: false) { req, emit in await runtime.service.handle(req, emit: emit) }
    }

    /// A daemon runs the engine; each request is one connection to its socket (``DaemonClient``:
    /// nothing blocks a thread, and a stream lasts as long as the front end listens).
    public static func daemon(socketPath: String) -> DeviceConnection {
        let client = DaemonClient(socketPath: socketPath)
        return DeviceConnection(attachedToDaemon: true) { req, emit in
            do {
                return try await client.send(req, onEvent: emit)
            } catch {
                return DeviceResponse(ok: false, message: "the daemon stopped answering")
            }
        }
    }
}
