import Foundation
import Logging
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// The engine's changes to the folder alone: each step checks the folder is as the trees say,
/// changes it through `FolderAccess` and returns what came of it — writing no tree (the engine
/// records the outcome) — and a folder that is not as planned, or a failing disk, changes
/// nothing.
@Suite("Local steps")
struct LocalStepsTests {
    func path(_ s: String) -> RelativePath { try! RelativePath(validating: s) }

    /// A folder, its trees and the steps over them (`disk`: the kernel's, or a failing one).
    struct Rig {
        let dir: TempDirectory
        let root: URL
        let trees: ItemTrees
        let steps: LocalSteps

        init(disk: any FolderAccess = SystemFolder()) throws {
            dir = try TempDirectory("ubiq-steps")
            root = dir.url.appendingPathComponent("folder")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: dir.url.appendingPathComponent("aside"), withIntermediateDirectories: true)
            trees = try ItemTrees(store: try EngineStore(path: dir.path + "/state.sqlite"))
            let files = LocalFiles(root: root)
            steps = LocalSteps(files: files, disk: disk.anchored(at: files.rootPath), trees: trees, aside: dir.path + "/aside", logger: Logger(label: "test"))
        }

        func write(_ p: String, _ text: String) throws -> FileStamp {
            let url = root.appendingPathComponent(p)
            try Data(text.utf8).write(to: url)
            return LocalFiles.stamp(url.path)!.1
        }
        func exists(_ p: String) -> Bool { FileManager.default.fileExists(atPath: root.appendingPathComponent(p).path) }
        func text(_ p: String) -> String? { try? String(contentsOf: root.appendingPathComponent(p), encoding: .utf8) }
    }

    @Test func aServerFolderIsMadeAndReportedNotRecorded() throws {
        let rig = try Rig()
        defer { rig.dir.remove() }
        let id = ItemID(uuid: UUID())
        rig.trees.remote[id] = RemoteEntry(node: RemoteNode(path: path("Docs"), kind: .folder, version: nil, hash: nil), conflictCount: 0)
        let outcome = try rig.steps.createFolder(id)
        let stamp = try #require(LocalFiles.stamp(rig.root.appendingPathComponent("Docs").path)?.1)
        #expect(outcome == .folderMade(id, path: path("Docs"), stamp: stamp))
        #expect(rig.trees.local[id] == nil && rig.trees.synced[id] == nil, "the step writes no tree")
        // A file in the way: nothing is made, nothing reported.
        let other = ItemID(uuid: UUID())
        rig.trees.remote[other] = RemoteEntry(node: RemoteNode(path: path("Notes"), kind: .folder, version: nil, hash: nil), conflictCount: 0)
        _ = try rig.write("Notes", "a file")
        #expect(try rig.steps.createFolder(other) == .unchanged)
        #expect(rig.text("Notes") == "a file")
    }

    @Test func aMoveHappensOnlyIfTheFileIsTheOneTheScanSawAndTheNameIsFree() throws {
        let rig = try Rig()
        defer { rig.dir.remove() }
        let id = ItemID(uuid: UUID())
        let entry = LocalEntry(kind: .file, stamp: try rig.write("a.txt", "mine"))
        rig.trees.local[id] = (path("a.txt"), entry)
        _ = try rig.write("taken.txt", "someone else's")
        #expect(try rig.steps.move(id, to: path("taken.txt")) == .unchanged)
        #expect(rig.text("taken.txt") == "someone else's" && rig.text("a.txt") == "mine", "never over anything")
        #expect(try rig.steps.move(id, to: path("b.txt")) == .moved(id, from: path("a.txt"), to: path("b.txt"), entry: entry))
        #expect(rig.text("b.txt") == "mine" && !rig.exists("a.txt"))
        #expect(rig.trees.local[id]?.path == path("a.txt"), "the step writes no tree")
    }

    @Test func aFileEditedSinceTheScanIsNotDeleted() throws {
        let rig = try Rig()
        defer { rig.dir.remove() }
        let id = ItemID(uuid: UUID())
        rig.trees.local[id] = (path("a.txt"), LocalEntry(kind: .file, stamp: try rig.write("a.txt", "as scanned")))
        _ = try rig.write("a.txt", "edited after the scan, longer")
        #expect(try rig.steps.delete(id) == .unchanged)
        #expect(rig.text("a.txt") == "edited after the scan, longer", "the edit is put back, not lost")
        rig.trees.local[id] = (path("a.txt"), LocalEntry(kind: .file, stamp: LocalFiles.stamp(rig.root.appendingPathComponent("a.txt").path)!.1))
        #expect(try rig.steps.delete(id) == .removed(id))
        #expect(!rig.exists("a.txt"))
    }

    @Test func aFailingDiskChangesNothingAndSaysSo() throws {
        let disk = FailingDisk(seed: 1, rate: 1)
        disk.setFailing(true)
        let rig = try Rig(disk: disk)
        defer { rig.dir.remove() }
        let id = ItemID(uuid: UUID())
        rig.trees.remote[id] = RemoteEntry(node: RemoteNode(path: path("Docs"), kind: .folder, version: nil, hash: nil), conflictCount: 0)
        #expect(throws: EngineError.self) { _ = try rig.steps.createFolder(id) }
        #expect(!rig.exists("Docs") && rig.trees.local[id] == nil)
    }
}
