import Foundation
import Logging
import ServiceLifecycle
import UbiqCore
import UbiqStorage

extension ServerServices {
    /// Purges what has been in the trash longer than `TrashPolicy.keepAge` (by the services'
    /// clock), giving the space back to its accounts.
    /// With several servers on one PostgreSQL database it runs on one of them at a time (an
    /// advisory lock); the others skip it (0 items).
    public func purgeTrash() async throws -> (items: Int, bytes: Int64) {
        let cutoff = clock().addingTimeInterval(-TrashPolicy.keepAge)
        let metadata = self.metadata
        guard let shared = database as? PostgreSQLDatabase else { return try await metadata.purgeTrash(deletedBefore: cutoff) }
        return try await shared.alone(job: PostgreSQLDatabase.purgeLock) { try await metadata.purgeTrash(deletedBefore: cutoff) } ?? (0, 0)
    }
}

/// Runs `purgeTrash` when the server starts and then every `interval`, until it stops.
struct TrashPurger: Service {
    let services: ServerServices
    let logger: Logger
    var interval: Duration = .seconds(3600)

    func run() async {
        repeat {
            do {
                let (items, bytes) = try await services.purgeTrash()
                if items > 0 { logger.info("purged \(Counted.of(items, "item")) older than 30 days from the trash; \(ByteSize.format(bytes)) given back") }
            } catch {
                logger.error("purging the trash failed (tried again later): \(error)")
            }
            do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) } } catch { return }
        } while !Task.isCancelled
    }
}
