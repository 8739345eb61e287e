import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

/// The wire side of every upload. Small files travel in batches — a single small file is a
/// batch of one: the chunks the server lacks go first, then one commit request names every
/// file with its content complete. A big file is committed first (other devices list it at
/// once and may stream it), then its missing chunks follow straight from the file, then the
/// version is completed. No engine state: the engine prepares the files (`File`) and records
/// the answers in one place (`SyncEngine.apply(uploads:)`, through `Transfers`).
struct UploadPipeline: Sendable {
    let client: any SyncServer
    let container: ContainerID

    /// A file about to go up, as the scan saw it.
    struct File: Sendable {
        let id: ItemID
        let base: VersionID?
        let path: RelativePath
        let stamp: FileStamp
        /// Its path on disk.
        let file: String
        let manifest: Manifest
        /// The bytes the scan read to hash it, when it kept them (a small file's).
        var kept: [UInt8]?
    }

    /// An upload the server answered, with the item as it stands once the content is complete.
    struct Answered: Sendable {
        let file: File
        let response: CommitResponse
        let item: ItemRecord
    }

    /// The merge base an upload's answer gives (one rule for single files and batches): the
    /// server's current version, or, when the server kept the content as a conflict version,
    /// the old base (`base`) with the conflict's content noted. `indexed`: the manifest is the
    /// item's current content (its chunks are indexed for the next edit's delta).
    static func syncedEntry(_ a: Answered, base: SyncedEntry?) -> (entry: SyncedEntry, indexed: Bool) {
        let resp = a.response, m = a.file.manifest
        if resp.outcome == .conflict || (resp.outcome == .unchanged && resp.version?.state == .conflict) {
            var node = base?.node ?? SyncedNode(path: a.item.path, kind: .file, version: nil, hash: nil)
            node.conflictHash = m.hash
            return (SyncedEntry(node: node, stamp: a.file.stamp, stampHash: m.hash), false)
        }
        let path = base?.node.path ?? a.item.path
        return (SyncedEntry(node: SyncedNode(path: path, kind: .file, version: a.item.current?.id, hash: a.item.current?.hash ?? m.hash),
                            stamp: a.file.stamp, stampHash: m.hash), true)
    }

    /// Sends the chunks of `files` the server lacks (each asked once), from the kept bytes or
    /// read back from the files, in framed requests. The server checks every chunk against its
    /// name: a file that changed since it was hashed is refused, never stored torn.
    func sendContent(of files: [File]) async throws {
        var hashes: [ContentHash] = []
        var seen = Set<ContentHash>()
        for f in files { for c in f.manifest.chunks where seen.insert(c.hash).inserted { hashes.append(c.hash) } }
        let transport = ChunkTransport(client: client)
        var missing = try await transport.missing(hashes)
        var chunks: [(ContentHash, [UInt8])] = []
        for f in files where f.manifest.chunks.contains(where: { missing.contains($0.hash) }) {
            let kept = f.kept.flatMap { $0.count == f.manifest.size ? $0 : nil }
            var offset = 0
            for c in f.manifest.chunks {
                defer { offset += c.size }
                guard missing.remove(c.hash) != nil else { continue }
                guard let bytes = kept.map({ Array($0[offset..<offset + c.size]) }) ?? LocalFiles.read(path: f.file, offset: offset, size: c.size) else {
                    throw EngineError(.hashMismatch, "\(f.path) changed while uploading; it will be sent again")
                }
                chunks.append((c.hash, bytes))
            }
        }
        try await transport.send(ChunkTransport.framed(chunks) { $0.1.count })
    }

    /// Commits a batch in one request; one result per request, in order.
    func commit(_ requests: [CommitRequest]) async throws -> [CommitBatchResult] {
        try await client.commitMany(container, requests)
    }

    /// Commits one file (a big one), described against its merge base's chunk list when
    /// `delta` is given; a server that does not know that base gets the whole manifest.
    func commit(_ request: (_ useDelta: Bool) -> CommitRequest, delta: Bool) async throws -> CommitResponse {
        do {
            return try await client.commit(container, request(delta))
        } catch let e as ClientError where delta && (e.code == .invalidRequest || e.code == .notFound) {
            return try await client.commit(container, request(false))  // the base was not what we thought: send it whole
        }
    }

    /// Sends what a committed version lacks (`missing`), read from the file at `path`, and
    /// completes it; returns the item as it then stands. `progress` hears the bytes sent.
    func complete(_ version: VersionID, manifest m: Manifest, from path: String, missing: [ContentHash],
                  progress: @escaping @Sendable (Int) async -> Void) async throws -> ItemRecord {
        try await ChunkTransport(client: client).send(m, from: path, missing: Set(missing), progress: progress)
        return try await client.complete(container, version: version)
    }
}
