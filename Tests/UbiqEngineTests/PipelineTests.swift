import Foundation
import Testing
import UbiqClient
import UbiqCore
@testable import UbiqEngine
import UbiqProtocol

/// The transfer pipelines alone (values in, outcomes out, the server scripted): a chunk list
/// that does not hash to what the server listed is never used, whatever path it came by; a
/// commit described as a delta against a base the server does not know goes again whole.
@Suite("Transfer pipelines")
struct PipelineTests {
    let container = try! ContainerID(validating: "iCloud.test")
    func path(_ s: String) -> RelativePath { try! RelativePath(validating: s) }

    /// A manifest of two chunks and the Remote entry that lists it.
    func version(_ text: String) -> (Manifest, RemoteEntry, VersionID) {
        let bytes = Array(text.utf8), mid = bytes.count / 2
        let parts = [Array(bytes[..<mid]), Array(bytes[mid...])]
        let m = Manifest(chunks: parts.map { ChunkRef(hash: ContentHash.of($0), size: $0.count) })
        let v = VersionID(uuid: UUID())
        let r = RemoteEntry(node: RemoteNode(path: path("a.txt"), kind: .file, version: v, hash: m.hash, size: bytes.count), conflictCount: 0)
        return (m, r, v)
    }

    func downloads(_ server: ScriptedServer) -> DownloadPipeline {
        DownloadPipeline(client: server, container: container, partials: "/nonexistent", disk: SystemFolder())
    }

    @Test func aChunkListThatIsNotTheListedVersionsIsRefused() async throws {
        let (good, entry, v) = version("the listed content")
        let (other, _, _) = version("another version's content")
        let w = DownloadPipeline.Wanted(id: ItemID(uuid: UUID()), version: v, target: path("a.txt"), expected: nil, remote: entry)
        let server = ScriptedServer()
        server.onManifests = { _ in [good] }
        #expect(try await downloads(server).manifests([w]) == [good])
        server.onManifests = { _ in [other] }
        await #expect(throws: EngineError.self) { _ = try await downloads(server).manifests([w]) }
        server.onManifests = { _ in [] }
        await #expect(throws: EngineError.self, "fewer lists than versions") { _ = try await downloads(server).manifests([w]) }
    }

    @Test func aDeltaThatDoesNotCheckOutFallsBackToTheWholeList() async throws {
        let (good, entry, v) = version("the listed content")
        let base = VersionID(uuid: UUID())
        let w = DownloadPipeline.Wanted(id: ItemID(uuid: UUID()), version: v, target: path("a.txt"), expected: nil, remote: entry)
        let server = ScriptedServer()
        // The delta names a chunk the base does not have: not usable; the whole list is asked for.
        server.onManifestDelta = { _, b in
            ManifestDelta(base: b, pieces: [.chunk(ChunkRef(hash: ContentHash.of(Array("x".utf8)), size: 1))], size: 1, hash: good.hash, digest: good.hash)
        }
        server.onManifest = { _ in good }
        let m = try await downloads(server).manifest(w, base: (base, [ChunkRef(hash: ContentHash.of(Array("old".utf8)), size: 3)]))
        #expect(m == good)
        #expect(server.calls == ["manifestDelta", "manifest"])
        // And a whole list that does not check out is refused too.
        let (other, _, _) = version("something else")
        server.onManifest = { _ in other }
        await #expect(throws: EngineError.self) { _ = try await downloads(server).manifest(w, base: nil) }
    }

    @Test func aCommitAgainstABaseTheServerDoesNotKnowGoesAgainWhole() async throws {
        let server = ScriptedServer()
        let id = ItemID(uuid: UUID())
        let sent = Sent()
        server.onCommit = { request in
            sent.add(request.manifest != nil)
            guard request.manifest != nil else { throw ClientError(.notFound, "no such base version") }
            return CommitResponse(outcome: .created, item: ScriptedServer.item(id, "a.txt", kind: .file), version: nil, missing: [])
        }
        let (m, _, v) = version("content")
        let uploads = UploadPipeline(client: server, container: container)
        let request = { (delta: Bool) in
            CommitRequest(itemID: id, versionID: v, path: try! RelativePath(validating: "a.txt"), kind: .file, base: nil, modified: Date(timeIntervalSince1970: 0),
                          manifest: delta ? nil : m, parent: nil)
        }
        let resp = try await uploads.commit(request, delta: true)
        #expect(resp.item.id == id)
        #expect(sent.whole == [false, true], "the delta first, then the whole list")
        // Any other refusal is the upload's failure, not a retry.
        server.onCommit = { _ in throw ClientError(.storageFull, "full") }
        await #expect(throws: ClientError.self) { _ = try await uploads.commit(request, delta: true) }
    }
}

/// Which commits went whole (`manifest`) rather than as a delta, in order.
private final class Sent: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [Bool] = []
    func add(_ whole: Bool) { lock.withLock { list.append(whole) } }
    var whole: [Bool] { lock.withLock { list } }
}
