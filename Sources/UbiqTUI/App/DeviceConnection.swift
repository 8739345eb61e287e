import Dispatch
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

    /// A daemon runs the engine; each request is one connection to its socket, made on a Dispatch
    /// thread (socket I/O blocks, and streams last as long as the front end).
    public static func daemon(socketPath: String) -> DeviceConnection {
        DeviceConnection(attachedToDaemon: true) { req, emit in
            await withCheckedContinuation { (c: CheckedContinuation<DeviceResponse, Never>) in
                let thread = Thread {
                    let r = DaemonSocket.ask(socketPath, req) { event in
                        let box = ResultBox()
                        let sem = DispatchSemaphore(value: 0)
                        Task { box.value = await emit(event); sem.signal() }
                        sem.wait()
                        return box.value
                    }
                    c.resume(returning: r ?? DeviceResponse(ok: false, message: "the daemon stopped answering"))
                }
                thread.start()
            }
        }
    }
}

/// A value handed from a task back to a waiting thread.
final class ResultBox: @unchecked Sendable {
    var value = true
}
