import Foundation
import Logging
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqProtocol

/// A server connection that loses things, put in place of a device's client: a seeded share of
/// requests never reach the server, and another share reach it but their answers are lost (the
/// server did the work; the device hears "unreachable"). The push channel is left alone.
public final class LossyServer: SyncServer, @unchecked Sendable {
    public enum Fault: Sendable { case request, answer }

    let real: UbiqAPIClient
    private let lock = NSLock()
    private var rng: SeededRandom
    private let rate: Double
    private var losing = true
    /// Every request fails as if the network were down.
    private var down = false
    /// Scripted losses, in order: the next answer to one of these requests, then maybe the network goes down.
    private var scripted: [(names: Set<String>, thenDown: Bool)] = []
    /// Each lost request or answer, in order: `"answer commitMany"`, …
    private(set) public var lost: [String] = []

    /// `rate`: the share of requests that go wrong (half of them lose the request, half the answer).
    public init(_ real: UbiqAPIClient, seed: UInt64, rate: Double) {
        self.real = real
        self.rng = SeededRandom(seed: seed)
        self.rate = rate
    }

    /// Stops (or resumes) losing things: a test lets the devices converge afterwards.
    public func setLosing(_ on: Bool) { lock.withLock { losing = on } }

    public var lostCount: Int { lock.withLock { lost.count } }

    /// Loses the answer to the next of these requests (by name: `commit`, `commitMany`, …); with
    /// `thenDown` every request after it fails until `setDown(false)`.
    /// Several calls queue up: each takes effect after the one before it.
    public func loseNextAnswer(of names: Set<String>, thenDown: Bool) { lock.withLock { scripted.append((names, thenDown)) } }

    /// Takes the network down or brings it back.
    public func setDown(_ on: Bool) { lock.withLock { down = on } }

    private func fault(_ what: String) -> Fault? {
        lock.withLock {
            if down { return .request }
            if let s = scripted.first, s.names.contains(what) {
                scripted.removeFirst()
                down = s.thenDown
                lost.append("answer \(what)")
                return .answer
            }
            guard losing, Double.random(in: 0..<1, using: &rng) < rate else { return nil }
            let f: Fault = Bool.random(using: &rng) ? .request : .answer
            lost.append("\(f) \(what)")
            return f
        }
    }

    private func call<T>(_ what: String, _ body: () async throws -> T) async throws -> T {
        switch fault(what) {
        case .request?: throw ClientError(.serverUnreachable, "lost on the way: \(what)")
        case .answer?:
            _ = try await body()
            throw ClientError(.serverUnreachable, "answer lost: \(what)")
        case nil: return try await body()
        }
    }

    public func changes(_ container: ContainerID, after cursor: Int64, limit: Int) async throws -> ChangesResponse {
        try await call("changes") { try await real.changes(container, after: cursor, limit: limit) }
    }
    public func listen(logger: Logger, onMessage: @escaping @Sendable (PushMessage) async -> Void) async throws {
        try await real.listen(logger: logger, onMessage: onMessage)
    }
    public func commit(_ container: ContainerID, _ request: CommitRequest) async throws -> CommitResponse {
        try await call("commit") { try await real.commit(container, request) }
    }
    public func commitMany(_ container: ContainerID, _ requests: [CommitRequest]) async throws -> [CommitBatchResult] {
        try await call("commitMany") { try await real.commitMany(container, requests) }
    }
    public func complete(_ container: ContainerID, version: VersionID) async throws -> ItemRecord {
        try await call("complete") { try await real.complete(container, version: version) }
    }
    public func move(_ container: ContainerID, item: ItemID, to path: RelativePath) async throws -> ItemRecord {
        try await call("move") { try await real.move(container, item: item, to: path) }
    }
    public func move(_ container: ContainerID, item: ItemID, to path: RelativePath, into parent: ItemID) async throws -> ItemRecord {
        try await call("move into") { try await real.move(container, item: item, to: path, into: parent) }
    }
    public func delete(_ container: ContainerID, item: ItemID) async throws -> ItemRecord {
        try await call("delete") { try await real.delete(container, item: item) }
    }
    public func delete(_ container: ContainerID, item: ItemID, unchangedSince since: Int64) async throws -> ItemRecord {
        try await call("delete unchanged") { try await real.delete(container, item: item, unchangedSince: since) }
    }
    public func restore(_ container: ContainerID, item: ItemID) async throws -> ItemRecord {
        try await call("restore") { try await real.restore(container, item: item) }
    }
    public func versions(_ container: ContainerID, item: ItemID) async throws -> VersionsResponse {
        try await call("versions") { try await real.versions(container, item: item) }
    }
    public func resolve(_ container: ContainerID, item: ItemID, keep: VersionID) async throws -> ItemRecord {
        try await call("resolve") { try await real.resolve(container, item: item, keep: keep) }
    }
    public func trash(_ container: ContainerID) async throws -> TrashResponse {
        try await call("trash") { try await real.trash(container) }
    }
    public func emptyTrash(_ container: ContainerID) async throws -> TrashEmptied {
        try await call("emptyTrash") { try await real.emptyTrash(container) }
    }
    public func manifest(_ container: ContainerID, version: VersionID) async throws -> Manifest {
        try await call("manifest") { try await real.manifest(container, version: version) }
    }
    public func manifests(_ container: ContainerID, versions: [VersionID]) async throws -> [Manifest] {
        try await call("manifests") { try await real.manifests(container, versions: versions) }
    }
    public func manifestDelta(_ container: ContainerID, version: VersionID, base: VersionID) async throws -> ManifestDelta {
        try await call("manifestDelta") { try await real.manifestDelta(container, version: version, base: base) }
    }
    public func missingChunks(_ hashes: [ContentHash]) async throws -> [ContentHash] {
        try await call("missingChunks") { try await real.missingChunks(hashes) }
    }
    public func uploadChunks(named chunks: [(ContentHash, [UInt8])]) async throws {
        try await call("uploadChunks") { try await real.uploadChunks(named: chunks) }
    }
    public func uploadChunks(named chunks: [(hash: ContentHash, size: Int)], fill: (Int, UnsafeMutableRawBufferPointer) throws -> Void) async throws {
        switch fault("uploadChunks filled") {
        case .request?: throw ClientError(.serverUnreachable, "lost on the way: uploadChunks")
        case .answer?:
            try await real.uploadChunks(named: chunks, fill: fill)
            throw ClientError(.serverUnreachable, "answer lost: uploadChunks")
        case nil: try await real.uploadChunks(named: chunks, fill: fill)
        }
    }
    public func downloadChunk(_ hash: ContentHash) async throws -> [UInt8] {
        try await call("downloadChunk") { try await real.downloadChunk(hash) }
    }
    public func downloadChunks(_ hashes: [ContentHash], waitSeconds: Int?) async throws -> [[UInt8]] {
        try await call("downloadChunks") { try await real.downloadChunks(hashes, waitSeconds: waitSeconds) }
    }
    public func fetchChunks(_ hashes: [ContentHash], waitSeconds: Int?) async throws -> FetchedChunks {
        try await call("fetchChunks") { try await real.fetchChunks(hashes, waitSeconds: waitSeconds) }
    }
}
