import Foundation
import Testing
import UbiqClient
import UbiqCore
@testable import UbiqEngine
import UbiqProtocol
import UbiqTesting

/// The engine's executor of server steps, alone, against a scripted server and a host that
/// records what it is asked: it reads the trees, never writes them, claims new folders' IDs
/// before their commit goes out, and hands every outcome to the host.
@Suite("Remote step runner")
struct RemoteStepRunnerTests {
    /// A `StepHost` that records each call in order (and applies nothing).
    final class RecordingHost: StepHost, @unchecked Sendable {
        private let lock = NSLock()
        private var log: [String] = []
        var calls: [String] { lock.withLock { log } }
        var applied: [RemoteOutcome] = []
        func note(_ s: String) { lock.withLock { log.append(s) } }
        func apply(_ outcome: RemoteOutcome) async throws -> Bool { note("apply"); lock.withLock { applied.append(outcome) }; return true }
        func noteMoving(_ id: ItemID, to: RelativePath) async { note("moving \(to)") }
        func run(_ op: SyncOp) async -> Bool { note("run \(op)"); return true }
        func runBatch(_ ops: [SyncOp], upload: Bool) async -> Bool { note("runBatch"); return false }
        func isOnline() async -> Bool { true }
        func announcedDownloads(excluding inFlight: Set<ItemID>) async -> [[SyncOp]]? { nil }
        func claim(_ ids: [ItemID]) async { note("claim \(ids.count)") }
        func noteSending(_ commits: [SentCommit]) async { note("sending") }
        func noteAnswered(_ items: [ItemID]) async { note("answered") }
        func noteAbandoned(_ v: VersionID) async { note("abandoned") }
        func newUUIDs(_ count: Int) async -> [UUID] { note("uuids \(count)"); return (0..<count).map { _ in UUID() } }
        func adopt(_ old: ItemID, as new: ItemID) async { note("adopt") }
        func noteRemote(_ item: ItemRecord) async { note("remote") }
        func failed(_ id: ItemID, code: String, message: String) async { note("failed \(code)") }
        func endsWithoutFailure(_ error: any Error) async -> Bool { note("ends?"); return false }
        func revivesAside(_ id: ItemID, path: RelativePath) async -> Bool { false }
        func apply(uploads: [UploadPipeline.Answered]) async throws { note("uploads") }
        func apply(downloads: [DownloadPipeline.Placed], swapped: Bool) async throws { note("downloads") }
        func transferProgress(_ id: ItemID, _ n: Int, add: Bool) async {}
        func shouldStepAside(_ id: ItemID, streaming: Bool) async -> Bool { false }
        func localChunks(of window: ArraySlice<ChunkRef>, replaced: ReplacedFileChunks?) async -> PartialDownload.LocalChunks { ([], [:], Array(window)) }
        func folderWatcher() async -> DirectoryWatcher? { nil }
    }

    let container = try! ContainerID(validating: "iCloud.test")
    func path(_ s: String) -> RelativePath { try! RelativePath(validating: s) }
    let stamp = FileStamp(inode: 7, size: 0, mtimeNanos: 1_000, ctimeNanos: 1_000)

    /// Trees in `dir` with two folders of this device's the server has not seen (`A`, `B`).
    func twoNewFolders(in dir: TempDirectory) throws -> (ItemTrees, ItemID, ItemID) {
        let trees = try ItemTrees(store: try EngineStore(path: dir.path + "/state.sqlite"))
        let a = ItemID(uuid: UUID()), b = ItemID(uuid: UUID())
        trees.local[a] = (path("A"), LocalEntry(kind: .folder, stamp: stamp))
        trees.local[b] = (path("B"), LocalEntry(kind: .folder, stamp: stamp))
        return (trees, a, b)
    }

    @Test func newFoldersAreClaimedBeforeTheirCommitAndTheOutcomeGoesToTheHost() async throws {
        let dir = try TempDirectory("ubiq-runner")
        defer { dir.remove() }
        let (trees, a, b) = try twoNewFolders(in: dir)
        let server = ScriptedServer(), host = RecordingHost()
        server.onCommitMany = { requests in
            host.note("commit \(requests.count)")
            #expect(requests.map(\.itemID) == [a, b] && requests.allSatisfy { $0.kind == .folder && $0.parent == nil })
            return requests.map { CommitBatchResult(response: CommitResponse(outcome: .created, item: ScriptedServer.item($0.itemID, $0.path.string), version: nil, missing: []), error: nil) }
        }
        let runner = RemoteStepRunner(host: host, trees: trees, steps: RemoteSteps(server: server, container: container), logger: .init(label: "test"))
        #expect(await runner.createRemoteFolders([a, b]))
        #expect(host.calls == ["claim 2", "uuids 2", "commit 2", "apply"], "\(host.calls)")
        guard case .foldersMade(let made) = host.applied.first else { Issue.record("\(host.applied)"); return }
        #expect(made.map(\.local) == [a, b] && made.allSatisfy { $0.item != nil })
        #expect(trees.remote.isEmpty, "the runner never writes the trees")
    }

    @Test func aBatchTheServerRefusesWhollyGoesOneFolderAtATimeThroughTheHost() async throws {
        let dir = try TempDirectory("ubiq-runner")
        defer { dir.remove() }
        let (trees, a, b) = try twoNewFolders(in: dir)
        let server = ScriptedServer(), host = RecordingHost()
        server.onCommitMany = { _ in throw ClientError(.invalidRequest, "refused") }
        let runner = RemoteStepRunner(host: host, trees: trees, steps: RemoteSteps(server: server, container: container), logger: .init(label: "test"))
        #expect(await runner.createRemoteFolders([a, b]))
        #expect(host.calls == ["claim 2", "uuids 2", "ends?", "run \(SyncOp.createRemoteFolder(a))", "run \(SyncOp.createRemoteFolder(b))"], "\(host.calls)")
    }

    @Test func aMoveWaitsForItsNewParentAndIsNotedBeforeItGoesOut() async throws {
        let dir = try TempDirectory("ubiq-runner")
        defer { dir.remove() }
        let trees = try ItemTrees(store: try EngineStore(path: dir.path + "/state.sqlite"))
        let id = ItemID(uuid: UUID())
        try trees.setSynced(id, SyncedEntry(node: SyncedNode(path: path("a.txt"), kind: .file, version: nil, hash: nil), stamp: stamp, stampHash: nil))
        let server = ScriptedServer(), host = RecordingHost()
        server.onMove = { item, to, _ in host.note("move"); return ScriptedServer.item(item, to.string, kind: .file, seq: 3) }
        let runner = RemoteStepRunner(host: host, trees: trees, steps: RemoteSteps(server: server, container: container), logger: .init(label: "test"))
        #expect(try await runner.moveRemote(id, to: path("Docs/a.txt")) == false, "no folder Docs here yet: the move waits")
        #expect(host.calls.isEmpty && server.calls.isEmpty)
        #expect(try await runner.moveRemote(id, to: path("b.txt")))
        #expect(host.calls == ["moving b.txt", "move", "apply"], "\(host.calls)")
    }
}
