import Foundation
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
@_spi(UbiqTools) import Ubiquity

/// How the front end reaches a device's engine: every call is a ``DeviceRequest`` (streams
/// deliver events through `emit`), answered in-process by a ``DeviceRuntime`` the front end
/// runs itself, or by a running daemon over its socket.
public struct DeviceConnection: Sendable {
    public let send: @Sendable (DeviceRequest, @escaping @Sendable (DeviceResponse) async -> Bool) async -> DeviceResponse
    /// A line for the header ("engine in this process" / "daemon").
    public let attachedToDaemon: Bool
    /// The container requests go to (nil: the device's first); `:container ID` changes it.
    public let choice: ContainerChoice
    /// Whether the engine behind this connection syncs several containers.
    public let switchable: Bool

    public init(attachedToDaemon: Bool, choice: ContainerChoice = ContainerChoice(), switchable: Bool = false,
                send: @escaping @Sendable (DeviceRequest, @escaping @Sendable (DeviceResponse) async -> Bool) async -> DeviceResponse) {
        self.attachedToDaemon = attachedToDaemon
        self.choice = choice
        self.switchable = switchable
        self.send = send
    }

    /// Requests without a stream.
    public func ask(_ request: DeviceRequest) async -> DeviceResponse { await send(request) { _ in true } }

    /// The engines of every container run in this process.
    public static func local(_ devices: DeviceRuntimes) -> DeviceConnection {
        let choice = ContainerChoice()
        return DeviceConnection(attachedToDaemon: false, choice: choice, switchable: true) { req, emit in
            await devices.handle(req, container: choice.value, emit: emit)
        }
    }

    /// One container's engine runs in this process.
    public static func local(_ runtime: DeviceRuntime) -> DeviceConnection {
        DeviceConnection(attachedToDaemon: false) { req, emit in await runtime.service.handle(req, emit: emit) }
    }

    /// A daemon runs the engine; the front end asks it through the `Ubiquity` library like any
    /// program (each request one connection to its socket: nothing blocks a thread, and a
    /// stream lasts as long as the front end listens).
    public static func daemon(_ ubiquity: Ubiquity) -> DeviceConnection {
        let choice = ContainerChoice()
        return DeviceConnection(attachedToDaemon: true, choice: choice, switchable: true) { req, emit in
            do {
                return try await ubiquity.send(req, container: choice.value, onEvent: emit)
            } catch {
                return DeviceResponse(ok: false, message: "the daemon stopped answering")
            }
        }
    }
}

/// Which container a connection's requests go to (shared by its copies).
public final class ContainerChoice: @unchecked Sendable {
    private let lock = NSLock()
    private var current: ContainerID?
    public init() {}
    public var value: ContainerID? {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }
}
