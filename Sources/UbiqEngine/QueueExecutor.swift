import Foundation
import UbiqCore

/// Runs an actor's jobs on one serial Dispatch queue (the engine's control queue), so
/// `dispatchPrecondition(condition: .onQueue(queue))` holds wherever state is touched.
final class QueueExecutor: SerialExecutor, @unchecked Sendable {
    let queue: DispatchQueue
    init(label: String) { queue = DispatchQueue(label: label) }
    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let me = asUnownedSerialExecutor()
        queue.async { unowned.runSynchronously(on: me) }
    }
    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}

/// The Synced and Remote trees as two threads load them at start-up.
final class LoadedTrees: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var synced: Result<[ItemID: SyncedEntry], Error>?
    private(set) var remote: Result<[ItemID: RemoteEntry], Error>?
    func set(synced r: Result<[ItemID: SyncedEntry], Error>) { lock.withLock { synced = r } }
    func set(remote r: Result<[ItemID: RemoteEntry], Error>) { lock.withLock { remote = r } }
}
