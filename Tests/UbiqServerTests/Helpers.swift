import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqTesting

let notes = try! ContainerID(validating: "TEAM.com.example.notes")

func path(_ s: String) -> RelativePath { try! RelativePath(validating: s) }

/// Uploads every chunk of `bytes` the server lacks and returns the manifest.
@discardableResult
func upload(_ client: UbiqAPIClient, _ bytes: [UInt8], chunker: Chunker = .standard) async throws -> Manifest {
    let m = Manifest.of(bytes, chunker: chunker)
    let missing = Set(try await client.missingChunks(m.chunks.map(\.hash)))
    var offset = 0
    for c in m.chunks {
        if missing.contains(c.hash) { try await client.uploadChunk(c.hash, Array(bytes[offset..<(offset + c.size)])) }
        offset += c.size
    }
    return m
}

/// Commits a file's content (uploading it first) and completes it.
@discardableResult
func commitFile(_ client: UbiqAPIClient, _ p: String, _ text: String, item: ItemID = ItemID(uuid: UUID()), base: VersionID? = nil,
                container: ContainerID = notes) async throws -> CommitResponse {
    try await commitFile(client, p, bytes: Array(text.utf8), item: item, base: base, container: container)
}

/// Commits a new folder at `p`.
@discardableResult
func commitFolder(_ client: UbiqAPIClient, _ p: String, container: ContainerID = notes) async throws -> CommitResponse {
    try await client.commit(container, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path(p),
                                                     kind: .folder, base: nil, modified: Date(), manifest: nil))
}

/// Commits raw bytes (uploading them first) and completes the version.
@discardableResult
func commitFile(_ client: UbiqAPIClient, _ p: String, bytes: [UInt8], item: ItemID = ItemID(uuid: UUID()), base: VersionID? = nil,
                container: ContainerID = notes) async throws -> CommitResponse {
    let m = try await upload(client, bytes)
    let r = try await client.commit(container, CommitRequest(itemID: item, versionID: VersionID(uuid: UUID()), path: path(p), kind: .file,
                                                             base: base, modified: Date(), manifest: m))
    if let v = r.version, !v.uploaded { _ = try await client.complete(container, version: v.id) }
    return r
}

/// Downloads a version's content through its manifest, verifying every chunk.
func download(_ client: UbiqAPIClient, version: VersionID, container: ContainerID = notes) async throws -> String {
    let m = try await client.manifest(container, version: version)
    var out: [UInt8] = []
    for c in m.chunks { out += try await client.downloadChunk(c.hash) }
    #expect(Manifest.of(out).hash == m.hash)
    return String(decoding: out, as: UTF8.self)
}

/// Runs `body` against a fresh server (its metadata on a database of `kind`) with users `alice`
/// and `bob`, then stops it.
/// `clock`: the server's clock (a test that counts within a time window stops it, so a loaded
/// machine's slowness does not move the window under it).
func withServer(_ kind: DatabaseKind = .sqlite, clock: @escaping @Sendable () -> Date = { Date() }, _ body: (TestServer) async throws -> Void) async throws {
    guard let database = try await kind.fresh() else { return }
    let server = try await TestServer.start(clock: clock, database: database)
    do {
        try await server.user("alice")
        try await server.user("bob")
        try await body(server)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
}

/// Expects `body` to fail with `code`.
func expectCode(_ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected \(code.rawValue), got success", sourceLocation: sourceLocation)
    } catch let e as ClientError {
        #expect(e.code == code, "got \(e)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code.rawValue), got \(error)", sourceLocation: sourceLocation)
    }
}
