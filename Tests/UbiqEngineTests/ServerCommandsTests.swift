import Foundation
import Testing
import UbiqClient
import UbiqCore
@testable import UbiqEngine
import UbiqProtocol

/// The server's commands alone (the engine finds the items and settles afterwards): previews
/// read only the chunks they need and verify each, a restore finds the item in the trash by
/// its path.
@Suite("Server commands")
struct ServerCommandsTests {
    let container = try! ContainerID(validating: "iCloud.test")
    func path(_ s: String) -> RelativePath { try! RelativePath(validating: s) }

    /// A version of three chunks: "aaaa", "bbbb", "cc".
    func threeChunks(_ server: ScriptedServer, corrupt: ContentHash? = nil) -> Manifest {
        let pieces = ["aaaa", "bbbb", "cc"].map { Array($0.utf8) }
        let refs = pieces.map { ChunkRef(hash: ContentHash.of($0), size: $0.count) }
        let byHash = Dictionary(uniqueKeysWithValues: zip(refs.map(\.hash), pieces))
        server.onChunk = { h in h == corrupt ? Array("zzzz".utf8) : byHash[h]! }
        let m = Manifest(chunks: refs, size: 10, hash: ContentHash.of(pieces.flatMap { $0 }))
        server.onManifest = { _ in m }
        return m
    }

    @Test func aPreviewReadsOnlyTheChunksItNeedsFromTheOffset() async throws {
        let server = ScriptedServer()
        _ = threeChunks(server)
        let commands = ServerCommands(server: server, container: container)
        let v = VersionID(uuid: UUID())
        #expect(try await commands.versionContent(of: path("a.txt"), version: v, limit: 5, offset: 0) == Array("aaaab".utf8))
        #expect(server.calls == ["manifest", "downloadChunk", "downloadChunk"], "the third chunk is not fetched")
        #expect(try await commands.versionContent(of: path("a.txt"), version: v, limit: 100, offset: 6) == Array("bbcc".utf8))
        #expect(server.calls.suffix(3) == ["manifest", "downloadChunk", "downloadChunk"], "the first chunk is skipped, not fetched")
        #expect(try await commands.versionContent(of: path("a.txt"), version: v, limit: 4, offset: 10).isEmpty)
    }

    @Test func aChunkThatIsNotWhatItsHashSaysIsRefused() async throws {
        let server = ScriptedServer()
        let m = threeChunks(server, corrupt: ContentHash.of(Array("bbbb".utf8)))
        await #expect(throws: EngineError.self) {
            _ = try await ServerCommands(server: server, container: container).versionContent(of: path("a.txt"), version: VersionID(uuid: UUID()), limit: 10, offset: 0)
        }
        #expect(m.chunks.count == 3)
    }

    @Test func aRestoreFindsTheItemInTheTrashByItsPath() async throws {
        let server = ScriptedServer()
        let wanted = ScriptedServer.item(ItemID(uuid: UUID()), "Docs/b.txt", kind: .file)
        server.onTrash = { TrashResponse(items: [ScriptedServer.item(ItemID(uuid: UUID()), "Docs/a.txt", kind: .file), wanted]) }
        server.onRestore = { id in
            #expect(id == wanted.id)
            return wanted
        }
        let commands = ServerCommands(server: server, container: container)
        #expect(try await commands.restore(path("Docs/b.txt")) == wanted)
        await #expect(throws: EngineError.self) { _ = try await commands.restore(path("Docs/c.txt")) }
        #expect(server.calls == ["trash", "restore", "trash"], "nothing is restored for a path not in the trash")
    }
}
