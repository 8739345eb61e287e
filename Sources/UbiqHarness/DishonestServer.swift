import Foundation
import Logging
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqProtocol

/// A server that lies to one device, put in place of its client (tamper tests of end-to-end
/// encryption): what it is told to do to what it sends back, on top of the real answers.
public final class DishonestServer: SyncServer, @unchecked Sendable {
    public enum Lie: Sendable, Equatable {
        /// Honest.
        case none
        /// Every chunk asked for comes back as the bytes of another chunk the device asked for
        /// (or, asked for one, of the previous one it asked for).
        case swapChunks
        /// Every chunk comes back one byte short.
        case cutChunks
        /// The last name of every path in the change feed becomes `name`.
        case renameTo(String)
        /// Each file version in a page of the change feed says it holds the content (hash and
        /// size) of the previous one: a version pointed at another file's chunks.
        case otherContent
        /// Versions in the change feed come without their sealed records.
        case dropRecords
        /// Each file in a page of the change feed is shown with the previous file's current
        /// version, whole (its ID, content and sealed record): a record moved to another item.
        case moveRecords
        /// Each file in a page of the change feed is shown with the first version this device
        /// was sent of it (ID, content and sealed record, all genuine): a rollback.
        case rollBack
    }

    let real: UbiqAPIClient
    private let lock = NSLock()
    private var lie: Lie = .none
    private var previous: [UInt8]?
    /// The first version of each item the device was sent.
    private var firstSent: [ItemID: VersionRecord] = [:]
    /// How many answers were altered.
    public private(set) var told = 0
    /// How many chunks it sent down (honest or not).
    public var chunksSent: Int { lock.withLock { sent } }
    private var sent = 0
    private func count(_ n: Int) { lock.withLock { sent += n } }

    public init(_ real: UbiqAPIClient) { self.real = real }

    /// What to do from now on.
    public func set(_ lie: Lie) { lock.withLock { self.lie = lie } }

    var current: Lie { lock.withLock { lie } }

    func altered(_ chunks: [[UInt8]]) -> [[UInt8]] {
        lock.withLock {
            switch lie {
            case .swapChunks:
                told += 1
                defer { previous = chunks.last }
                if chunks.count > 1 { return Array(chunks.dropFirst()) + [chunks[0]] }
                return [previous ?? Array(repeating: 0, count: 64)]
            case .cutChunks:
                told += 1
                return chunks.map { Array($0.dropLast()) }
            case .none, .renameTo, .otherContent, .dropRecords, .moveRecords, .rollBack:
                return chunks
            }
        }
    }

    func altered(_ r: ItemRecord) -> ItemRecord {
        guard case .renameTo(let name) = current, let parent = r.path.parent, let p = try? parent.appending(name) else { return r }
        lock.withLock { told += 1 }
        var r = r
        r.path = p
        return r
    }

    public func changes(_ container: ContainerID, after cursor: Int64, limit: Int) async throws -> ChangesResponse {
        var r = try await real.changes(container, after: cursor, limit: limit)
        r.items = r.items.map(altered)
        let files = r.items.indices.filter { r.items[$0].current != nil }
        switch current {
        case .otherContent where !files.isEmpty:
            lock.withLock { told += 1 }
            // The previous file's content (one file alone: a content of another file it made up).
            var contents = files.map { (r.items[$0].current!.hash, r.items[$0].current!.size) }
            if contents.count == 1 { contents.append((ContentHash.of(Array("another file".utf8)), 12)) }
            for (k, i) in files.enumerated() {
                (r.items[i].current!.hash, r.items[i].current!.size) = contents[(k + contents.count - 1) % contents.count]
            }
        case .moveRecords where files.count > 1:
            lock.withLock { told += 1 }
            let versions = files.map { r.items[$0].current! }
            for (k, i) in files.enumerated() { r.items[i].current = versions[(k + versions.count - 1) % versions.count] }
        case .dropRecords where !files.isEmpty:
            lock.withLock { told += 1 }
            for i in files { r.items[i].current!.sealed = nil }
        case .rollBack:
            lock.withLock {
                for i in files {
                    guard let first = firstSent[r.items[i].id], first.id != r.items[i].current!.id else { continue }
                    told += 1
                    r.items[i].current = first
                }
            }
        default: break
        }
        lock.withLock { for i in files where firstSent[r.items[i].id] == nil { firstSent[r.items[i].id] = r.items[i].current } }
        return r
    }
    public func listen(logger: Logger, onMessage: @escaping @Sendable (PushMessage) async -> Void) async throws {
        try await real.listen(logger: logger, onMessage: onMessage)
    }
    public func commit(_ c: ContainerID, _ request: CommitRequest) async throws -> CommitResponse { try await real.commit(c, request) }
    public func commitMany(_ c: ContainerID, _ requests: [CommitRequest]) async throws -> [CommitBatchResult] { try await real.commitMany(c, requests) }
    public func complete(_ c: ContainerID, version: VersionID) async throws -> ItemRecord { try await real.complete(c, version: version) }
    public func move(_ c: ContainerID, item: ItemID, to path: RelativePath) async throws -> ItemRecord { try await real.move(c, item: item, to: path) }
    public func move(_ c: ContainerID, item: ItemID, to path: RelativePath, into parent: ItemID) async throws -> ItemRecord {
        try await real.move(c, item: item, to: path, into: parent)
    }
    public func delete(_ c: ContainerID, item: ItemID) async throws -> ItemRecord { try await real.delete(c, item: item) }
    public func delete(_ c: ContainerID, item: ItemID, unchangedSince since: Int64) async throws -> ItemRecord {
        try await real.delete(c, item: item, unchangedSince: since)
    }
    public func restore(_ c: ContainerID, item: ItemID) async throws -> ItemRecord { try await real.restore(c, item: item) }
    public func versions(_ c: ContainerID, item: ItemID) async throws -> VersionsResponse { try await real.versions(c, item: item) }
    public func resolve(_ c: ContainerID, item: ItemID, keep: VersionID) async throws -> ItemRecord { try await real.resolve(c, item: item, keep: keep) }
    public func trash(_ c: ContainerID) async throws -> TrashResponse { try await real.trash(c) }
    public func emptyTrash(_ c: ContainerID) async throws -> TrashEmptied { try await real.emptyTrash(c) }
    public func manifest(_ c: ContainerID, version: VersionID) async throws -> Manifest { try await real.manifest(c, version: version) }
    public func manifests(_ c: ContainerID, versions: [VersionID]) async throws -> [Manifest] { try await real.manifests(c, versions: versions) }
    public func manifestDelta(_ c: ContainerID, version: VersionID, base: VersionID) async throws -> ManifestDelta {
        try await real.manifestDelta(c, version: version, base: base)
    }
    public func missingChunks(_ hashes: [ContentHash]) async throws -> [ContentHash] { try await real.missingChunks(hashes) }
    public func uploadChunks(named chunks: [(ContentHash, [UInt8])]) async throws { try await real.uploadChunks(named: chunks) }
    public func uploadChunks(named chunks: [(hash: ContentHash, size: Int)], fill: (Int, UnsafeMutableRawBufferPointer) throws -> Void) async throws {
        try await real.uploadChunks(named: chunks, fill: fill)
    }
    public func downloadChunk(_ hash: ContentHash) async throws -> [UInt8] {
        count(1)
        return altered([try await real.downloadChunk(hash)])[0]
    }
    public func downloadChunks(_ hashes: [ContentHash], waitSeconds: Int?) async throws -> [[UInt8]] {
        count(hashes.count)
        return altered(try await real.downloadChunks(hashes, waitSeconds: waitSeconds))
    }
    public func fetchChunks(_ hashes: [ContentHash], waitSeconds: Int?) async throws -> FetchedChunks {
        count(hashes.count)
        let got = try await real.fetchChunks(hashes, waitSeconds: waitSeconds)
        guard current != .none else { return got }
        return FetchedChunks(chunks: altered((0..<got.count).map { got.bytes($0) }))
    }
}
