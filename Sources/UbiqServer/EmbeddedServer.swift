import Foundation
import Logging
import ServiceLifecycle

/// The server running inside another process (`ubiq demo`, benchmarks): the same application
/// as `ubiq server`, on a loopback port (0 picks a free one), stopped with ``stop()``.
public final class EmbeddedServer: Sendable {
    public let port: Int
    let group: ServiceGroup
    let task: Task<Void, Error>

    init(port: Int, group: ServiceGroup, task: Task<Void, Error>) { self.port = port; self.group = group; self.task = task }

    /// Starts serving and returns once the port is bound; `maxConnections` and
    /// `maxConnectionsPerAddress` as `ubiq server` takes them (a benchmark's thousands of push
    /// channels from one address).
    public static func start(services: ServerServices, host: String = "127.0.0.1", port: Int = 0, logger: Logger,
                             maxConnections: Int = 1000, maxConnectionsPerAddress: Int? = nil) async throws -> EmbeddedServer {
        let (ports, cont) = AsyncStream<Int>.makeStream()
        let app = try UbiqServerApp.make(services: services, host: host, port: port, logger: logger, maxConnections: maxConnections,
                                         maxConnectionsPerAddress: maxConnectionsPerAddress) { cont.yield($0); cont.finish() }
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        var bound = 0
        for await p in ports { bound = p }
        guard bound > 0 else { throw APIFailure(.internalError, "the embedded server did not start") }
        return EmbeddedServer(port: bound, group: group, task: task)
    }

    /// The base URL devices use.
    public var url: String { "http://127.0.0.1:\(port)" }

    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}
