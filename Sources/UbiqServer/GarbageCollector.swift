import Foundation
import Logging
import ServiceLifecycle
import UbiqCore
import UbiqProtocol
import UbiqStorage

/// How long garbage collection waits before it takes a chunk from an account that uploaded it
/// but never committed a version listing it (a device that uploads and goes offline before its
/// commit uploads again when it comes back: the commit answers which chunks are missing).
public enum ChunkCollection {
    public static let uncommittedGrace: TimeInterval = 24 * 3600
    /// Chunks looked at per page; uploads wait for at most one page's decision.
    static let pageSize = 1_000
    /// How often the server collects by itself.
    public static let interval: Duration = .seconds(6 * 3600)
    /// After the trash is emptied, how long the server waits (for more) before it collects.
    public static let afterEmptying: Duration = .seconds(30)
    /// Least time between the starts of two collections woken by emptied trashes (#45 row 8: a
    /// loop of make, delete, empty kept a full collection running, each page holding uploads
    /// back); the six-hourly one is not held back.
    public static let wokenGap: Duration = .seconds(600)

    /// How long a woken collector waits before it collects: `delay` (for more to be emptied),
    /// and at least until `gap` has passed since the previous collection began.
    public static func waitAfterWake(sinceLast: Duration?, delay: Duration, gap: Duration) -> Duration {
        guard let since = sinceLast else { return delay }
        return max(delay, gap - since)
    }
    /// What a collection asked for while another server of the fleet collects is told.
    static let elsewhere = "another server on this database is collecting garbage now; try again when it has finished"

    /// Another server of the fleet collects now (the collector's own loop skips its turn; a
    /// person asking is told ``elsewhere``).
    struct Elsewhere: Error {}
}

/// Garbage collection and what keeps it apart from uploads: a collection decides page by page
/// under the chunk gate (exclusive), uploads run under it shared (`storing`); one collection at
/// a time, in this process and (with a shared guard) in the fleet of servers on one database.
struct ChunkCollector: Sendable {
    let chunks: any ChunkStore
    let liveness: any ChunkLivenessStore
    let clock: @Sendable () -> Date
    /// Uploads (shared) against garbage collection's decisions (exclusive): `storing`.
    let chunkGate: AsyncGate
    /// One garbage collection at a time.
    let turn: AsyncGate
    let wake: Wakeup
    let sharedGuard: (any SharedChunkGuard)?

    /// Garbage collection: gives back the space of chunks no account holds and no version lists
    /// (history pruned, trash purged or emptied, accounts deleted, uploads never committed).
    ///
    /// A chunk is forgotten only while no upload is between "is it stored?" and "the account
    /// holds it" (`storing`, shared, around every upload; a page's decision, exclusive), so an
    /// upload that found a chunk stored and skipped writing it can never see it go. Runs one at
    /// a time. With `dryRun` nothing changes and the report says what would go.
    func collectGarbage(dryRun: Bool = false) async throws -> GarbageReport {
        // One at a time in this process (they wait their turn) …
        try await turn.exclusive {
            guard let shared = sharedGuard else { return try await collectHere(dryRun: dryRun) }
            // … and in the fleet of servers on one database and bucket (told, not kept waiting).
            guard let report = try await shared.aloneInFleet({ try await self.collectHere(dryRun: dryRun) }) else {
                throw ChunkCollection.Elsewhere()
            }
            return report
        }
    }

    private func collectHere(dryRun: Bool) async throws -> GarbageReport {
        do {
            let started = ContinuousClock.now
            var report = GarbageReport(dryRun: dryRun)
            report.storeBytesBefore = try await chunks.footprint()
            let released = try await liveness.releaseUncommitted(uploadedBefore: clock().addingTimeInterval(-ChunkCollection.uncommittedGrace), dryRun: dryRun)
            report.releasedUploads = released.chunks
            report.releasedBytes = released.bytes
            if let shared = sharedGuard, !dryRun {
                _ = try await shared.clearStaleDeclarations(before: clock().addingTimeInterval(-ChunkCollection.uncommittedGrace))
            }
            let found = FoundGarbage()
            try await chunks.storedChunks(pageSize: ChunkCollection.pageSize) { page in
                let (dead, bytes) = try await chunkGate.exclusive {
                    let dead: [StoredChunk]
                    if let shared = sharedGuard {
                        // The decision and the forgetting in one transaction of the shared database.
                        dead = try await shared.forgetUnheld(page, dryRun: dryRun)
                    } else {
                        let live = try await liveness.liveChunks(among: page.map(\.hash))
                        dead = page.filter { !live.contains($0.hash) }
                        if !dryRun { _ = try await chunks.forget(dead.map(\.hash)) }
                    }
                    // Sized as the store listed them (a sealed store lists its chunks' own sizes).
                    let listed = Dictionary(page.map { ($0.hash, $0.size) }, uniquingKeysWith: { a, _ in a })
                    return (dead.count, dead.reduce(Int64(0)) { $0 + Int64(listed[$1.hash] ?? $1.size) })
                }
                await found.add(scanned: page.count, dead: dead, bytes: bytes)
            }
            (report.scannedChunks, report.garbageChunks, report.garbageBytes) = await found.totals
            if !dryRun {
                let c = try await chunks.compact()
                (report.packsDeleted, report.packsRewritten, report.bytesFreed) = (c.deleted, c.rewritten, c.bytesFreed)
            }
            report.storeBytesAfter = try await chunks.footprint()
            let took = ContinuousClock.now - started
            report.seconds = Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
            return report
        }
    }

    /// Runs `body` (an upload of `hashes`: storing chunks and recording that the account holds
    /// them) so that garbage collection decides nothing about them meanwhile: in this process
    /// (the gate), and on the other servers of a shared database (a declaration, withdrawn on
    /// every path; see `SharedChunkGuard`).
    func storing<T: Sendable>(_ hashes: [ContentHash], _ body: @Sendable () async throws -> T) async throws -> T {
        guard let shared = sharedGuard else { return try await chunkGate.shared(body) }
        let token = try await shared.declareUpload(hashes, now: clock())
        do {
            let result = try await chunkGate.shared(body)
            try? await shared.withdrawUpload(token)
            return result
        } catch {
            try? await shared.withdrawUpload(token)
            throw error
        }
    }

    /// ``collectGarbage(dryRun:)`` for someone who asked (`ubiq server gc`): told in words when
    /// another server of the fleet collects now.
    func collectGarbageForAPerson(dryRun: Bool) async throws -> GarbageReport {
        do { return try await collectGarbage(dryRun: dryRun) } catch is ChunkCollection.Elsewhere {
            throw APIFailure(.invalidRequest, ChunkCollection.elsewhere)
        }
    }

    /// Asks the server's collector to run soon (after the trash is emptied).
    func collectSoon() async { await wake.signal() }
}

/// Counts of one collection (added to from the pages' decisions).
private actor FoundGarbage {
    var totals: (Int, Int, Int64) = (0, 0, 0)
    func add(scanned: Int, dead: Int, bytes: Int64) { totals = (totals.0 + scanned, totals.1 + dead, totals.2 + bytes) }
}

/// How many collections the server's own collector has begun (for tests and metrics).
public actor RunCount {
    public private(set) var value = 0
    func add() { value += 1 }
}

/// A signal a waiting loop wakes on, or a timeout.
actor Wakeup {
    private var pending = false
    private var waiter: CheckedContinuation<Void, Never>?

    func signal() {
        pending = true
        waiter?.resume()
        waiter = nil
    }

    /// Returns true when signalled (now or before), false when `timeout` passed first.
    func wait(timeout: Duration) async -> Bool {
        if pending { pending = false; return true }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.expire()
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                if Task.isCancelled { c.resume() } else { waiter = c }
            }
        } onCancel: {
            Task { await self.expire() }
        }
        timer.cancel()
        let signalled = pending
        pending = false
        return signalled
    }

    private func expire() {
        waiter?.resume()
        waiter = nil
    }
}

/// Collects garbage every `ChunkCollection.interval`, and `ChunkCollection.afterEmptying`
/// after someone empties a trash, until the server stops.
struct GarbageCollectorService: Service {
    let services: ServerServices
    let logger: Logger
    var interval = ChunkCollection.interval

    func run() async {
        var lastStart: ContinuousClock.Instant?
        while !Task.isCancelled {
            // A graceful shutdown ends the wait (and the loop) at once.
            let woken = await cancelWhenGracefulShutdown { await services.collectionWake.wait(timeout: interval) }
            if Task.isCancelled || Task.isShuttingDownGracefully { return }
            if woken {
                // More may be emptied meanwhile: one collection for them all, and not more
                // often than the gap allows, however often trashes are emptied.
                let wait = ChunkCollection.waitAfterWake(sinceLast: lastStart.map { .now - $0 }, delay: services.collectionDelay, gap: services.collectionGap)
                do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) } } catch { return }
            }
            lastStart = .now
            await services.collectionRuns.add()
            do {
                let r = try await services.collector.collectGarbage()
                if r.garbageChunks + r.releasedUploads > 0 {
                    logger.info("garbage collection: \(Counted.of(r.garbageChunks, "chunk")) no longer used, \(ByteSize.format(r.bytesFreed)) given back in \(String(format: "%.1f", r.seconds)) s")
                }
            } catch is ChunkCollection.Elsewhere {
                logger.debug("garbage collection: another server is collecting")
            } catch {
                logger.error("garbage collection failed (tried again later): \(error)")
            }
        }
    }
}
