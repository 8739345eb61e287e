import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

/// The wire and disk side of every download. Small files travel in batches — a single small
/// file is a batch of one: manifests in one request, chunks this device lacks in framed
/// requests, every file written to a partial file and flushed, each renamed into place unless
/// its local file changed, one flush of their folders. A big file is assembled window by
/// window into a resumable partial file (see `PartialDownload`), streaming while another
/// device still uploads it. Every manifest is checked against the hash the server listed for
/// its version. No engine state: the engine says what it wants and records what was placed
/// in one place (`SyncEngine.apply(downloads:)`).
struct DownloadPipeline: Sendable {
    let client: any SyncServer
    let container: ContainerID
    /// The folder of partial files (beside the container folder, on its file system).
    let partials: String
    /// The changes to the synced folder (the renames into place).
    let disk: any FolderAccess

    /// A version wanted at a place in the folder.
    struct Wanted: Sendable {
        let id: ItemID
        let version: VersionID
        /// Where it goes (the local item's path, else the server's).
        let target: RelativePath
        /// The local file it replaces, as the plan saw it (nil: none).
        let expected: FileStamp?
        let remote: RemoteEntry
    }

    /// A version placed in the folder, to be recorded.
    struct Placed: Sendable {
        let wanted: Wanted
        let manifest: Manifest
        let stamp: FileStamp
    }

    /// The partial file of one version.
    func partial(_ id: ItemID, _ version: VersionID) -> String { partials + "/\(id)-\(version).partial" }

    /// The manifests of `wanted`, in one request, each checked.
    func manifests(_ wanted: [Wanted]) async throws -> [Manifest] {
        let got = try await client.manifests(container, versions: wanted.map(\.version))
        guard got.count == wanted.count else { throw EngineError(.hashMismatch, "the server answered \(got.count) chunk lists for \(wanted.count) versions") }
        for (w, m) in zip(wanted, got) { try Self.check(m, w) }
        return got
    }

    /// One version's manifest, as a delta from `base` (the synced version and its chunk list)
    /// when given and the server can describe it so, else whole; checked.
    func manifest(_ w: Wanted, base: (version: VersionID, chunks: [ChunkRef])?) async throws -> Manifest {
        if let base, base.version != w.version, !base.chunks.isEmpty,
           let d = try? await client.manifestDelta(container, version: w.version, base: base.version), let m = try? d.apply(baseChunks: base.chunks),
           (try? Self.check(m, w)) != nil {
            return m
        }
        let m = try await client.manifest(container, version: w.version)
        try Self.check(m, w)
        return m
    }

    /// A chunk list must hash to what the server listed for the version (a server that mixed up
    /// versions would otherwise place one file's content under another's name).
    static func check(_ m: Manifest, _ w: Wanted) throws {
        guard m.isConsistent, m.hash == w.remote.node.hash || w.remote.node.hash == nil else {
            throw EngineError(.hashMismatch, "the server's chunk list for \(w.target) does not match its hash; it will be fetched again")
        }
    }

    /// Writes a batch of small files from verified `chunks` (off the caller's queue), flushes
    /// them, renames each into place at `dest(target)` unless its local file changed meanwhile,
    /// and flushes their folders. One stamp per file (nil: skipped for a local edit).
    func writeAndPlace(_ jobs: [(Wanted, Manifest)], dest: (RelativePath) -> String, chunks: [ContentHash: [UInt8]],
                       watcher: DirectoryWatcher?, settle: Duration, coordination: Coordination? = nil) async throws -> [FileStamp?] {
        let files = WrittenFiles(items: jobs.map { w, m in
            WrittenFiles.Item(manifest: m, partial: partial(w.id, w.version), modified: w.remote.modified, permissions: w.remote.permissions,
                              placement: Placement(partial: partial(w.id, w.version), dest: dest(w.target), path: w.target.string, expected: w.expected))
        })
        // The renames are this engine's own: they alone do not call for a rescan.
        let targets = jobs.map { $0.0.target.string }
        watcher?.expectMoves(into: targets)
        let stamps: [FileStamp?]
        do {
            stamps = try await Task.detached(priority: .userInitiated) {
                try files.writeAndPlace(chunks: chunks, disk: disk, watcher: watcher, settle: settle, coordination: coordination)
            }.value
        } catch {
            watcher?.cancelMoves(into: targets)
            throw error
        }
        watcher?.cancelMoves(into: zip(targets, stamps).compactMap { $1 == nil ? $0 : nil })
        return stamps
    }
}
