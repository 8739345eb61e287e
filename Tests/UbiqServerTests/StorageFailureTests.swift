import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqServer
import UbiqStorage
import UbiqTesting

/// #45 row 7: `storage_failure` answers carried the database host and the object-store
/// endpoint to every client. A client now gets a generic message with a request ID; the
/// server's log has the detail under the same ID.
@Suite("Storage failures")
struct StorageFailureTests {
    /// A chunk store whose every call fails the way a real one does, naming where it is.
    struct Broken: ChunkStore {
        static let detail = "object store at http://s3.internal.example:7480 (bucket ubiq-prod) refused: 503"
        func fail() -> StorageError { StorageError(.storageFailure, Self.detail) }
        func put(_ hash: ContentHash, _ bytes: [UInt8]) async throws { throw fail() }
        func get(_ hash: ContentHash) async throws -> [UInt8]? { throw fail() }
        func has(_ hash: ContentHash) async throws -> Bool { throw fail() }
        func putMany(_ chunks: [(ContentHash, ArraySlice<UInt8>)], hashesChecked: Bool) async throws { throw fail() }
        func putMany(body: PackBytes, chunks: [(ContentHash, Range<Int>)], hashesChecked: Bool) async throws { throw fail() }
        func visitMany(_ hashes: [ContentHash], limit: Int, verify: Bool, _ visit: (Int, UnsafeRawBufferPointer) throws -> Void) async throws { throw fail() }
        func storedChunks(pageSize: Int, _ visit: ([StoredChunk]) async throws -> Void) async throws { throw fail() }
        func forget(_ hashes: [ContentHash]) async throws -> Int64 { throw fail() }
        func compact() async throws -> Compaction { throw fail() }
        func footprint() async throws -> Int64 { throw fail() }
    }

    @Test func aClientIsToldTheStorageFailedButNotWhereItIs() async throws {
        let server = try await TestServer.start(configure: { s in
            let rounds = s.passwordRounds
            s = ServerServices(metadata: s.metadata, keyValues: s.keyValues, admin: s.admin, liveness: s.liveness, chunks: Broken(), push: s.push, clock: s.clock)
            s.passwordRounds = rounds
        })
        do { try await check(server) } catch { await server.stop(); throw error }
        await server.stop()
    }

    func check(_ server: TestServer) async throws {
        try await server.user("alice")
        let (c, _) = try await server.device("alice")
        let bytes = Array("some content".utf8)
        do {
            try await c.uploadChunk(ContentHash.of(bytes), bytes)
            Issue.record("a broken store took a chunk")
        } catch let e as ClientError {
            #expect(e.code == .storageFailure, "\(e)")
            #expect(!e.message.contains("s3.internal.example") && !e.message.contains("ubiq-prod") && !e.message.contains("7480"), "\(e.message)")
            let id = try #require(e.message.firstMatch(of: /request ([0-9a-f]{12})/)?.1).description
            let logged = await eventually { server.log.recent.contains { $0.contains("request \(id)") && $0.contains(Broken.detail) } }
            #expect(logged, "the server's log has the detail under \(id)")
        }
    }
}
