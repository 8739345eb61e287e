import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// The engine's trees and their database (`ItemTrees`): what is written is what a restarted
/// engine loads, a folder's move carries what it holds in both trees, and the questions about
/// items answer from the trees alone.
@Suite("Item trees")
struct ItemTreesTests {
    static func path(_ s: String) -> RelativePath { try! RelativePath(validating: s) }
    static func item(_ id: ItemID, _ path: String, folder: Bool = false, deleted: Bool = false, seq: Int64) -> ItemRecord {
        let v = folder ? nil : VersionRecord(id: VersionID(uuid: UUID()), state: .current, size: 3, hash: ContentHash.of(Array(path.utf8)),
                                             modified: Date(timeIntervalSince1970: 1_700_000_000), committed: Date(timeIntervalSince1970: 1_700_000_000),
                                             device: DeviceID(uuid: UUID()), deviceName: "phone", uploaded: true)
        return ItemRecord(id: id, path: Self.path(path), kind: folder ? .folder : .file, current: v, conflictCount: 0,
                          deletedAt: deleted ? Date() : nil, changeSeq: seq)
    }

    /// Seeded: random pages of the feed, own answers, folder moves and merge-base moves; after
    /// each step a fresh `ItemTrees` on the same database holds exactly the same Remote and
    /// Synced trees and cursor, and every descendant of a moved folder moved with it.
    @Test func whatIsWrittenIsWhatARestartLoads() throws {
        var rng = SeededRandom.forTest("item.trees")
        let dir = try TempDirectory("ubiq-trees")
        defer { dir.remove() }
        let store = try EngineStore(path: dir.path + "/state.sqlite")
        let trees = try ItemTrees(store: store)
        var ids: [ItemID] = []
        var seq: Int64 = 0
        var folders = ["Documents"]
        for step in 0..<200 {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5:  // a page of the feed: new items, changes, deletions
                var page: [ItemRecord] = []
                for _ in 0..<Int.random(in: 1...6, using: &rng) {
                    seq += 1
                    let folder = Bool.random(using: &rng)
                    let parent = folders.randomElement(using: &rng)!
                    let p = parent + "/" + (folder ? "d" : "f") + "\(seq)"
                    if let id = ids.randomElement(using: &rng), Int.random(in: 0..<4, using: &rng) == 0 {
                        page.append(Self.item(id, trees.remote[id]?.node.path.string ?? p, deleted: true, seq: seq))
                    } else {
                        let id = ItemID(uuid: UUID())
                        ids.append(id)
                        if folder { folders.append(p) }
                        page.append(Self.item(id, p, folder: folder, seq: seq))
                    }
                }
                try trees.apply(page: page, cursor: seq)
                for r in page { try trees.setSynced(r.id, r.isDeleted ? nil : SyncedEntry(node: SyncedNode(path: r.path, kind: r.kind, version: r.current?.id, hash: r.current?.hash), stamp: nil, stampHash: nil)) }
            case 5..<7:  // this device's own answer
                guard let id = ids.randomElement(using: &rng), let r = trees.remote[id] else { continue }
                seq += 1
                trees.noteRemote(Self.item(id, r.node.path.string, folder: r.node.kind == .folder, seq: seq))
            default:  // a folder moved on the server and here
                guard let (id, r) = trees.remote.first(where: { $0.value.node.kind == .folder }), let parent = folders.randomElement(using: &rng),
                      !Self.path(parent).isSelfOrDescendant(of: r.node.path) else { continue }
                let old = r.node.path, new = Self.path(parent + "/m\(step)")
                let inside = trees.remote.filter { $0.key != id && $0.value.node.path.isSelfOrDescendant(of: old) }.map(\.key)
                trees.noteRemote(Self.item(id, new.string, folder: true, seq: seq))
                try trees.moveRemoteContents(of: id, from: old, to: new)
                if let s = trees.synced[id] { try trees.rebaseSynced(id, from: s.node.path, to: new) }
                for k in inside {
                    #expect(trees.remote[k]!.node.path.isSelfOrDescendant(of: new), "seed \(rng.seed): \(k) stayed behind")
                    if let s = trees.synced[k] { #expect(s.node.path.isSelfOrDescendant(of: new), "seed \(rng.seed): merge base of \(k) stayed behind") }
                }
                folders = folders.map { Self.path($0).isSelfOrDescendant(of: old) ? Self.path($0).rebased(from: old, to: new).string : $0 }
            }
            let again = try ItemTrees(store: store)
            #expect(again.remote.storage == trees.remote.storage, "seed \(rng.seed) step \(step): the Remote tree did not survive a restart")
            #expect(again.synced.storage == trees.synced.storage, "seed \(rng.seed) step \(step): the Synced tree did not survive a restart")
            #expect(again.cursor == trees.cursor)
        }
        #expect(trees.remote.count > 50, "the run made items: \(trees.remote.count)")
    }

    /// Questions answered from the trees: the item at a path (local first), items under a
    /// folder, a new item's parent, an ID the server merged, and where an item is.
    @Test func questionsAnswerFromTheTrees() throws {
        let dir = try TempDirectory("ubiq-trees")
        defer { dir.remove() }
        let trees = try ItemTrees(store: try EngineStore(path: dir.path + "/state.sqlite"))
        let folder = ItemID(uuid: UUID()), onServer = ItemID(uuid: UUID()), newHere = ItemID(uuid: UUID()), merged = ItemID(uuid: UUID())
        try trees.apply(page: [Self.item(folder, "Documents/a", folder: true, seq: 1), Self.item(onServer, "Documents/a/x.txt", seq: 2)], cursor: 2)
        let stamp = FileStamp(inode: 9, size: 1, mtimeNanos: 1, ctimeNanos: 1)
        trees.local[folder] = (Self.path("Documents/a"), LocalEntry(kind: .folder, stamp: stamp))
        trees.local[newHere] = (Self.path("Documents/a/y.txt"), LocalEntry(kind: .file, stamp: stamp))
        trees.localHashes[newHere] = .empty
        #expect(trees.itemID(at: Self.path("Documents/a/y.txt")) == newHere)
        #expect(trees.itemID(at: Self.path("Documents/a/x.txt")) == onServer)
        #expect(trees.items(under: Self.path("Documents/a")) == [folder, onServer, newHere].sorted())
        #expect(trees.items(under: Self.path("Documents/a/x.txt")) == [onServer], "a file on the server alone")
        #expect(trees.items(under: Self.path("Documents/a/y.txt")) == [newHere], "a file here alone")
        #expect(trees.items(under: Self.path("Documents/a/z.txt")).isEmpty)
        #expect(trees.commitParent(newHere, Self.path("Documents/a/y.txt")) == folder, "a new item is committed into this device's folder")
        #expect(trees.commitParent(onServer, Self.path("Documents/a/x.txt")) == nil, "an item the server has names no parent")
        #expect(trees.knows(onServer) && !trees.knows(merged))
        let moved = trees.adopt(newHere, as: merged)
        #expect(moved?.path == Self.path("Documents/a/y.txt") && trees.local[newHere] == nil && trees.localHashes[merged] == .empty)
        #expect(trees.path(of: merged) == Self.path("Documents/a/y.txt") && trees.path(of: newHere) == nil)
        #expect(trees.diagnose("Documents/a/x.txt") { _ in "" }.contains("remote file Documents/a/x.txt"))
    }
}
