import Foundation
import Testing
import UbiqClient
import UbiqCore
@testable import UbiqEngine
import UbiqProtocol

/// The plan's server steps that move no content, alone: each sends the one request it is
/// given and turns the answer into an outcome — "another device got there first" included —
/// without touching any tree (the engine applies the outcome).
@Suite("Remote steps")
struct RemoteStepsTests {
    let container = try! ContainerID(validating: "iCloud.test")
    func path(_ s: String) -> RelativePath { try! RelativePath(validating: s) }
    let stamp = FileStamp(inode: 7, size: 0, mtimeNanos: 1_000, ctimeNanos: 1_000)

    func folderRequest(_ id: ItemID, _ p: String) -> CommitRequest {
        CommitRequest(itemID: id, versionID: VersionID(uuid: UUID()), path: path(p), kind: .folder, base: nil, modified: Date(timeIntervalSince1970: 0),
                      manifest: nil, parent: nil)
    }

    @Test func foldersAreMadeInOneRequestAndEachAnswerKeepsItsFolder() async throws {
        let server = ScriptedServer()
        let a = ItemID(uuid: UUID()), b = ItemID(uuid: UUID()), merged = ItemID(uuid: UUID())
        server.onCommitMany = { requests in
            // The server merges `a` with a folder it already had (another ID) and refuses `b`.
            [CommitBatchResult(response: CommitResponse(outcome: .created, item: ScriptedServer.item(merged, requests[0].path.string), version: nil, missing: []), error: nil),
             CommitBatchResult(response: nil, error: .init(code: .pathExists, message: "taken"))]
        }
        let outcome = try await RemoteSteps(server: server, container: container)
            .makeFolders([(a, stamp, folderRequest(a, "A")), (b, stamp, folderRequest(b, "B"))])
        guard case .foldersMade(let made) = outcome else { Issue.record("\(outcome)"); return }
        #expect(made.map(\.local) == [a, b])
        #expect(made[0].item?.id == merged && made[0].refusal == nil && made[0].stamp == stamp)
        #expect(made[1].item == nil && made[1].refusal?.code == .pathExists)
        #expect(server.calls == ["commitMany"])
    }

    @Test func anAnswerForFewerFoldersThanSentIsAnErrorNotASilentLoss() async {
        let server = ScriptedServer()
        let a = ItemID(uuid: UUID()), b = ItemID(uuid: UUID())
        server.onCommitMany = { _ in [] }
        await #expect(throws: EngineError.self) {
            _ = try await RemoteSteps(server: server, container: container).makeFolders([(a, stamp, folderRequest(a, "A")), (b, stamp, folderRequest(b, "B"))])
        }
    }

    @Test func aMoveIntoAFolderNamesTheFolderAndComesBackWithWhereItWasFrom() async throws {
        let server = ScriptedServer()
        let id = ItemID(uuid: UUID()), parent = ItemID(uuid: UUID())
        server.onMove = { item, to, into in
            #expect(item == id && into == parent)
            return ScriptedServer.item(item, to.string, kind: .file, seq: 9)
        }
        let outcome = try await RemoteSteps(server: server, container: container).move(id, from: path("a.txt"), to: path("Docs/a.txt"), into: parent)
        #expect(outcome == .moved(id, from: path("a.txt"), to: path("Docs/a.txt"), item: ScriptedServer.item(id, "Docs/a.txt", kind: .file, seq: 9)))
        #expect(server.calls == ["move into"])
        server.onMove = { item, to, into in
            #expect(into == nil)
            return ScriptedServer.item(item, to.string, kind: .file, seq: 10)
        }
        _ = try await RemoteSteps(server: server, container: container).move(id, from: path("Docs/a.txt"), to: path("a.txt"), into: nil)
        #expect(server.calls == ["move into", "move"], "a move to the top names no folder")
    }

    @Test func aMoveRefusedBecauseAnotherDeviceGotThereFirstIsAnOutcome() async throws {
        let server = ScriptedServer()
        let id = ItemID(uuid: UUID())
        let steps = RemoteSteps(server: server, container: container)
        server.onMove = { _, _, _ in throw ClientError(.pathExists, "taken") }
        #expect(try await steps.move(id, from: path("a"), to: path("b"), into: nil) == .moveNameTaken(id, to: path("b")))
        server.onMove = { _, _, _ in throw ClientError(.itemChanged, "the folder moved") }
        #expect(try await steps.move(id, from: path("a"), to: path("b"), into: nil) == .moveWaits(id, why: "the folder moved"))
        // Anything else is the step's failure (the engine records it on the item and retries).
        server.onMove = { _, _, _ in throw ClientError(.serverUnreachable, "down") }
        await #expect(throws: ClientError.self) { _ = try await steps.move(id, from: path("a"), to: path("b"), into: nil) }
    }

    @Test func aDeleteIsConditionalOnTheCursorThePlanSaw() async throws {
        let server = ScriptedServer()
        let id = ItemID(uuid: UUID())
        let steps = RemoteSteps(server: server, container: container)
        server.onDelete = { item, since in
            #expect(since == 41)
            return ScriptedServer.item(item, "Old", seq: 42)
        }
        #expect(try await steps.delete(id, unchangedSince: 41, folder: path("Old")) == .deleted(id, item: ScriptedServer.item(id, "Old", seq: 42), folder: path("Old")))
        #expect(server.calls == ["delete since"])
        server.onDelete = { _, _ in throw ClientError(.itemChanged, "edited meanwhile") }
        #expect(try await steps.delete(id, unchangedSince: 41, folder: nil) == .deleteWaits(id, why: "edited meanwhile"))
        server.onDelete = { _, _ in throw ClientError(.notFound, "gone") }
        #expect(try await steps.delete(id, unchangedSince: 41, folder: nil) == .alreadyGone(id))
    }
}
