import Foundation
import Logging
import ServiceLifecycle
import UbiqServer

/// An embedded server on a free loopback port with one account `bench` (password `bench-pw`),
/// its data in a temp folder removed by `stop()`.
struct BenchServer {
    let dir: URL
    let port: Int
    let logger: Logger
    let group: ServiceGroup
    let task: Task<Void, Error>

    static func start(label: String) async throws -> BenchServer {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ubiq-\(label)-\(UUID().uuidString.prefix(8))")
        let services = try ServerServices.embedded(at: dir.appendingPathComponent("server"))
        try await services.addUser(name: "bench", password: "bench-pw", quota: 1 << 40)
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let (ports, cont) = AsyncStream<Int>.makeStream()
        let app = UbiqServerApp.make(services: services, host: "127.0.0.1", port: 0, logger: logger) { cont.yield($0); cont.finish() }
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        var port = 0
        for await p in ports { port = p }
        return BenchServer(dir: dir, port: port, logger: logger, group: group, task: task)
    }

    func stop(keepingData: Bool = false) async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        if !keepingData { try? FileManager.default.removeItem(at: dir) }
    }
}
