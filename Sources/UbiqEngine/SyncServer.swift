import Foundation
import Logging
import UbiqClient
import UbiqCore
import UbiqProtocol

/// The server as the sync engine uses it: every request a device's engine makes, in one list.
/// `UbiqAPIClient` is the one that ships; tests put a wrapper in its place to lose requests or
/// their answers (see `SyncEngine.init(home:config:server:logger:settleTime:)`).
public protocol SyncServer: Sendable {
    /// How this server's chunks are named: `.plain` unless it seals an encrypted account's
    /// (``SealedSyncServer``). Everything that names or checks a chunk asks it.
    var naming: ChunkNaming { get }
    /// True when every chunk it returns was checked against the name it was asked for (the real
    /// client does); a layer above then need not hash it again.
    var verifiesChunks: Bool { get }
    // The change feed and the push channel.
    func changes(_ container: ContainerID, after cursor: Int64, limit: Int) async throws -> ChangesResponse
    func listen(logger: Logger, onMessage: @escaping @Sendable (PushMessage) async -> Void) async throws
    // Versions and items.
    func commit(_ container: ContainerID, _ request: CommitRequest) async throws -> CommitResponse
    func commitMany(_ container: ContainerID, _ requests: [CommitRequest]) async throws -> [CommitBatchResult]
    func complete(_ container: ContainerID, version: VersionID) async throws -> ItemRecord
    func move(_ container: ContainerID, item: ItemID, to path: RelativePath) async throws -> ItemRecord
    func move(_ container: ContainerID, item: ItemID, to path: RelativePath, into parent: ItemID) async throws -> ItemRecord
    func delete(_ container: ContainerID, item: ItemID) async throws -> ItemRecord
    func delete(_ container: ContainerID, item: ItemID, unchangedSince since: Int64) async throws -> ItemRecord
    func restore(_ container: ContainerID, item: ItemID) async throws -> ItemRecord
    func versions(_ container: ContainerID, item: ItemID) async throws -> VersionsResponse
    func resolve(_ container: ContainerID, item: ItemID, keep: VersionID) async throws -> ItemRecord
    func trash(_ container: ContainerID) async throws -> TrashResponse
    func emptyTrash(_ container: ContainerID) async throws -> TrashEmptied
    // Manifests.
    func manifest(_ container: ContainerID, version: VersionID) async throws -> Manifest
    func manifests(_ container: ContainerID, versions: [VersionID]) async throws -> [Manifest]
    func manifestDelta(_ container: ContainerID, version: VersionID, base: VersionID) async throws -> ManifestDelta
    // Chunks.
    func missingChunks(_ hashes: [ContentHash]) async throws -> [ContentHash]
    func uploadChunks(named chunks: [(ContentHash, [UInt8])]) async throws
    func uploadChunks(named chunks: [(hash: ContentHash, size: Int)], fill: (Int, UnsafeMutableRawBufferPointer) throws -> Void) async throws
    func downloadChunk(_ hash: ContentHash) async throws -> [UInt8]
    func downloadChunks(_ hashes: [ContentHash], waitSeconds: Int?) async throws -> [[UInt8]]
    func fetchChunks(_ hashes: [ContentHash], waitSeconds: Int?) async throws -> FetchedChunks
}

extension SyncServer {
    public var naming: ChunkNaming { .plain }
    public var verifiesChunks: Bool { false }
}

extension UbiqAPIClient: SyncServer {
    public var verifiesChunks: Bool { true }
}
