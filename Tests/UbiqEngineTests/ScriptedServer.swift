import Foundation
import Logging
import UbiqClient
import UbiqCore
@testable import UbiqEngine
import UbiqProtocol

/// A server for the executors' unit tests: each request the test scripts answers from its
/// closure, and every request is recorded (`calls`); a request the test did not script fails
/// the way an unreachable server does, so an executor that asks for more than it should is seen.
final class ScriptedServer: SyncServer, @unchecked Sendable {
    private let lock = NSLock()
    private var log: [String] = []
    var calls: [String] { lock.withLock { log } }

    var onCommit: (@Sendable (CommitRequest) throws -> CommitResponse)?
    var onCommitMany: (@Sendable ([CommitRequest]) throws -> [CommitBatchResult])?
    var onMove: (@Sendable (ItemID, RelativePath, ItemID?) throws -> ItemRecord)?
    var onDelete: (@Sendable (ItemID, Int64?) throws -> ItemRecord)?
    var onVersions: (@Sendable (ItemID) throws -> VersionsResponse)?
    var onResolve: (@Sendable (ItemID, VersionID) throws -> ItemRecord)?
    var onTrash: (@Sendable () throws -> TrashResponse)?
    var onRestore: (@Sendable (ItemID) throws -> ItemRecord)?
    var onManifest: (@Sendable (VersionID) throws -> Manifest)?
    var onManifests: (@Sendable ([VersionID]) throws -> [Manifest])?
    var onManifestDelta: (@Sendable (VersionID, VersionID) throws -> ManifestDelta)?
    var onChunk: (@Sendable (ContentHash) throws -> [UInt8])?

    private func record(_ call: String) { lock.withLock { log.append(call) } }
    private func unscripted(_ name: String) -> ClientError {
        record("unscripted \(name)")
        return ClientError(.serverUnreachable, "\(name) is not scripted in this test")
    }
    private func answer<T>(_ name: String, _ body: (() throws -> T)?) throws -> T {
        guard let body else { throw unscripted(name) }
        record(name)
        return try body()
    }

    func changes(_ container: ContainerID, after cursor: Int64, limit: Int) async throws -> ChangesResponse { throw unscripted("changes") }
    func listen(logger: Logger, onMessage: @escaping @Sendable (PushMessage) async -> Void) async throws { throw unscripted("listen") }
    func commit(_ container: ContainerID, _ request: CommitRequest) async throws -> CommitResponse {
        try answer("commit", onCommit.map { f in { try f(request) } })
    }
    func commitMany(_ container: ContainerID, _ requests: [CommitRequest]) async throws -> [CommitBatchResult] {
        try answer("commitMany", onCommitMany.map { f in { try f(requests) } })
    }
    func complete(_ container: ContainerID, version: VersionID) async throws -> ItemRecord { throw unscripted("complete") }
    func move(_ container: ContainerID, item: ItemID, to path: RelativePath) async throws -> ItemRecord {
        try answer("move", onMove.map { f in { try f(item, path, nil) } })
    }
    func move(_ container: ContainerID, item: ItemID, to path: RelativePath, into parent: ItemID) async throws -> ItemRecord {
        try answer("move into", onMove.map { f in { try f(item, path, parent) } })
    }
    func delete(_ container: ContainerID, item: ItemID) async throws -> ItemRecord {
        try answer("delete", onDelete.map { f in { try f(item, nil) } })
    }
    func delete(_ container: ContainerID, item: ItemID, unchangedSince since: Int64) async throws -> ItemRecord {
        try answer("delete since", onDelete.map { f in { try f(item, since) } })
    }
    func restore(_ container: ContainerID, item: ItemID) async throws -> ItemRecord {
        try answer("restore", onRestore.map { f in { try f(item) } })
    }
    func versions(_ container: ContainerID, item: ItemID) async throws -> VersionsResponse {
        try answer("versions", onVersions.map { f in { try f(item) } })
    }
    func resolve(_ container: ContainerID, item: ItemID, keep: VersionID) async throws -> ItemRecord {
        try answer("resolve", onResolve.map { f in { try f(item, keep) } })
    }
    func trash(_ container: ContainerID) async throws -> TrashResponse { try answer("trash", onTrash) }
    func emptyTrash(_ container: ContainerID) async throws -> TrashEmptied { throw unscripted("emptyTrash") }
    func manifest(_ container: ContainerID, version: VersionID) async throws -> Manifest {
        try answer("manifest", onManifest.map { f in { try f(version) } })
    }
    func manifests(_ container: ContainerID, versions: [VersionID]) async throws -> [Manifest] {
        try answer("manifests", onManifests.map { f in { try f(versions) } })
    }
    func manifestDelta(_ container: ContainerID, version: VersionID, base: VersionID) async throws -> ManifestDelta {
        try answer("manifestDelta", onManifestDelta.map { f in { try f(version, base) } })
    }
    func missingChunks(_ hashes: [ContentHash]) async throws -> [ContentHash] { throw unscripted("missingChunks") }
    func uploadChunks(named chunks: [(ContentHash, [UInt8])]) async throws { throw unscripted("uploadChunks") }
    func uploadChunks(named chunks: [(hash: ContentHash, size: Int)], fill: (Int, UnsafeMutableRawBufferPointer) throws -> Void) async throws {
        throw unscripted("uploadChunks")
    }
    func downloadChunk(_ hash: ContentHash) async throws -> [UInt8] { try answer("downloadChunk", onChunk.map { f in { try f(hash) } }) }
    func downloadChunks(_ hashes: [ContentHash], waitSeconds: Int?) async throws -> [[UInt8]] { throw unscripted("downloadChunks") }
    func fetchChunks(_ hashes: [ContentHash], waitSeconds: Int?) async throws -> FetchedChunks { throw unscripted("fetchChunks") }

    /// An item record as the server answers it.
    static func item(_ id: ItemID = ItemID(uuid: UUID()), _ path: String, kind: ItemKind = .folder, seq: Int64 = 1) -> ItemRecord {
        ItemRecord(id: id, path: try! RelativePath(validating: path), kind: kind, current: nil, conflictCount: 0, deletedAt: nil, changeSeq: seq)
    }
}
