import Foundation
import Logging
import UbiqServer

/// An embedded server on a free loopback port with one account `bench` (password `bench-pw`),
/// its data in a temp folder removed by `stop()`.
struct BenchServer {
    let dir: URL
    let server: EmbeddedServer
    let logger: Logger
    var port: Int { server.port }

    static func start(label: String) async throws -> BenchServer {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ubiq-\(label)-\(UUID().uuidString.prefix(8))")
        let services = try ServerServices.embedded(at: dir.appendingPathComponent("server"))
        try await services.addUser(name: "bench", password: "bench-pw", quota: 1 << 40)
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        return BenchServer(dir: dir, server: try await EmbeddedServer.start(services: services, logger: logger), logger: logger)
    }

    func stop(keepingData: Bool = false) async {
        await server.stop()
        if !keepingData { try? FileManager.default.removeItem(at: dir) }
    }
}
