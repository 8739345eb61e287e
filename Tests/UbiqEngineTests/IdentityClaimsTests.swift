import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// The identity rules of the Local tree (`IdentityClaims`), as a pure function: seeded random
/// folders of synced items that a user then renames, moves, edits, saves atomically, deletes,
/// replaces by links and adds to (with inode numbers handed on, as ext4 does), checked
/// against the rules every device relies on.
@Suite("Identity claims")
struct IdentityClaimsTests {
    struct Item { let id: ItemID; var path: RelativePath; let kind: ItemKind; var stamp: FileStamp; let hash: ContentHash }

    static func p(_ s: String) -> RelativePath { try! RelativePath(validating: s) }

    @Test func everyEntryIsClaimedOnceAndNoIDChangesKindOrFile() {
        var rng = SeededRandom.forTest("identity.claims")
        var uuid: UInt64 = 0
        func newID() -> ItemID {
            uuid += 1
            return ItemID(uuid: UUID(uuidString: String(format: "00000000-0000-0000-0000-%012llX", uuid))!)
        }
        var nextInode: UInt64 = 1000
        func inode() -> UInt64 { nextInode += 1; return nextInode }
        for round in 0..<300 {
            // A synced tree: a few folders, files in them.
            var items: [Item] = []
            let folders = (0..<Int.random(in: 1...4, using: &rng)).map { Self.p("Documents/d\($0)") }
            items.append(Item(id: newID(), path: Self.p("Documents"), kind: .folder, stamp: FileStamp(inode: inode(), size: 0, mtimeNanos: 1, ctimeNanos: 1), hash: .empty))
            for f in folders { items.append(Item(id: newID(), path: f, kind: .folder, stamp: FileStamp(inode: inode(), size: 0, mtimeNanos: 1, ctimeNanos: 1), hash: .empty)) }
            for i in 0..<Int.random(in: 1...10, using: &rng) {
                let dir = ([Self.p("Documents")] + folders).randomElement(using: &rng)!
                items.append(Item(id: newID(), path: try! dir.appending("f\(i).txt"), kind: .file,
                                  stamp: FileStamp(inode: inode(), size: Int64(i + 1), mtimeNanos: 5, ctimeNanos: 5), hash: ContentHash.of([UInt8(i)])))
            }
            let synced = Dictionary(uniqueKeysWithValues: items.map {
                ($0.id, SyncedEntry(node: SyncedNode(path: $0.path, kind: $0.kind, version: nil, hash: $0.kind == .file ? $0.hash : nil),
                                    stamp: $0.stamp, stampHash: $0.kind == .file ? $0.hash : nil))
            })
            var remote = Dictionary(uniqueKeysWithValues: items.map {
                ($0.id, RemoteEntry(node: RemoteNode(path: $0.path, kind: $0.kind, version: nil, hash: nil), conflictCount: 0))
            })
            // What the user did since.
            var entries: [RelativePath: LocalEntry] = [:]
            var expectSame: [RelativePath: ItemID] = [:]  // entries that must keep their item
            var opaque = Set<RelativePath>()
            var movedTo: [ItemID: RelativePath] = [:]
            var tempIDs: [UInt64: ItemID] = [:]
            for it in items {
                if it.kind == .folder {
                    entries[it.path] = LocalEntry(kind: .folder, stamp: it.stamp)
                    expectSame[it.path] = it.id
                    continue
                }
                switch Int.random(in: 0..<8, using: &rng) {
                case 0:  // edited in place
                    var st = it.stamp; st.size += 1; st.mtimeNanos += 1
                    entries[it.path] = LocalEntry(kind: .file, stamp: st)
                    expectSame[it.path] = it.id
                case 1:  // renamed
                    let to = Self.p(it.path.string + ".renamed")
                    entries[to] = LocalEntry(kind: .file, stamp: it.stamp)
                    expectSame[to] = it.id
                case 2:  // saved atomically: a new inode at the same path
                    entries[it.path] = LocalEntry(kind: .file, stamp: FileStamp(inode: inode(), size: 9, mtimeNanos: 9, ctimeNanos: 9))
                    expectSame[it.path] = it.id
                case 3:  // deleted
                    break
                case 4:  // moved on the server (this device's move, its answer lost), then saved atomically here
                    let to = Self.p(it.path.string + ".moved")
                    remote[it.id]?.node.path = to
                    entries[to] = LocalEntry(kind: .file, stamp: FileStamp(inode: inode(), size: 7, mtimeNanos: 7, ctimeNanos: 7))
                    expectSame[to] = it.id
                case 5:  // moved by this device, the answer not heard yet (the server's listing
                         // still has it at its old place), then saved atomically at the new place
                    let to = Self.p(it.path.string + ".sent")
                    movedTo[it.id] = to
                    let saved = inode()
                    entries[to] = LocalEntry(kind: .file, stamp: FileStamp(inode: saved, size: 6, mtimeNanos: 6, ctimeNanos: 6))
                    expectSame[to] = it.id
                    // The temporary file seen (and given a new ID) before it was renamed.
                    if Bool.random(using: &rng) { tempIDs[saved] = newID() }
                default:  // unchanged
                    entries[it.path] = LocalEntry(kind: .file, stamp: it.stamp)
                    expectSame[it.path] = it.id
                }
            }
            // A folder renamed, with what it holds (files in it saved atomically before the scan
            // keep their items too: neither their inode nor their path is the synced one).
            if folders.count > 2, Bool.random(using: &rng) {
                let from = folders[2], to = Self.p("Documents/renamed\(round)")
                for (path, e) in entries where path.isSelfOrDescendant(of: from) {
                    entries[path] = nil
                    entries[path.rebased(from: from, to: to)] = e
                    if let id = expectSame.removeValue(forKey: path) { expectSame[path.rebased(from: from, to: to)] = id }
                }
            }
            // A folder replaced by a link: its items stay as they were.
            if folders.count > 1, Bool.random(using: &rng) {
                let gone = folders[0]
                opaque.insert(gone)
                for (path, _) in entries where path.isSelfOrDescendant(of: gone) { entries[path] = nil; expectSame[path] = nil }
            }
            // A folder deleted with its files.
            var deletedFolder: Item?
            if folders.count > 2, Bool.random(using: &rng), let f = items.first(where: { $0.path == folders[1] }) {
                deletedFolder = f
                for (path, _) in entries where path.isSelfOrDescendant(of: f.path) { entries[path] = nil; expectSame[path] = nil }
            }
            // New files; one with a deleted folder's identity (a file system without birth times
            // hands a deleted folder's inode number to the next file: the ID must not pass);
            // one at a remote item's path.
            var newOnes: [RelativePath] = []
            for k in 0..<Int.random(in: 0...4, using: &rng) {
                let path = Self.p("Documents/new\(round)-\(k).txt")
                var id = inode()
                if k == 0, let f = deletedFolder { id = f.stamp.inode }
                entries[path] = LocalEntry(kind: .file, stamp: FileStamp(inode: id, size: 3, mtimeNanos: 3, ctimeNanos: 3))
                newOnes.append(path)
            }
            let remoteOnly = newID()
            remote[remoteOnly] = RemoteEntry(node: RemoteNode(path: newOnes.first ?? Self.p("Documents/elsewhere.txt"), kind: .file, version: nil, hash: nil), conflictCount: 0)
            let folderID = items.first { $0.kind == .folder }!.id
            let newLocal: [UInt64: ItemID] = Dictionary(uniqueKeysWithValues: newOnes.dropFirst().prefix(1).map { (entries[$0]!.stamp.inode, folderID) })
                .merging(tempIDs) { a, _ in a }

            let claims = IdentityClaims(synced: synced, remote: remote, newLocalIDs: newLocal, movedTo: movedTo)
            var minted = 0
            let out = claims.claim(entries, opaque: opaque) { minted += 1; return newID() }
            let seed = "seed \(rng.seed) round \(round)"
            // Every entry exactly once; items under a link kept as they were.
            let claimedPaths = out.result.values.map(\.path)
            #expect(Set(claimedPaths).count == claimedPaths.count, "\(seed): a path claimed twice")
            #expect(Set(claimedPaths).isSuperset(of: entries.keys), "\(seed): an entry unclaimed")
            for (id, c) in out.result where entries[c.path] == nil {
                #expect(IdentityClaims.isAtOrUnder(c.path, opaque) && synced[id]?.node.path == c.path, "\(seed): \(c.path) claimed from nowhere")
            }
            // No ID passes to an entry of another kind.
            for (id, c) in out.result {
                if let k = synced[id]?.node.kind ?? remote[id]?.node.kind { #expect(k == c.entry.kind, "\(seed): \(c.path) took a \(k)'s ID") }
            }
            // Kept, renamed, edited and atomically saved items keep their IDs.
            let byPath = Dictionary(uniqueKeysWithValues: out.result.map { ($0.value.path, $0.key) })
            for (path, id) in expectSame { #expect(byPath[path] == id, "\(seed): \(path) lost its item") }
            // A new file never takes a deleted file's ID, nor a folder's.
            for path in newOnes {
                let id = byPath[path]!
                #expect(synced[id] == nil, "\(seed): new \(path) took synced item \(synced[id]?.node.path.string ?? "")'s ID")
            }
            // Hashes: known for unchanged files, looked at for the rest.
            for (id, c) in out.result where c.entry.kind == .file {
                if let s = synced[id], s.stamp == c.entry.stamp, c.path == s.node.path, !IdentityClaims.isAtOrUnder(c.path, opaque) {
                    #expect(out.hashes[id] == s.stampHash, "\(seed): \(c.path)")
                } else {
                    #expect(out.check.contains(id) || out.hashes[id] != nil, "\(seed): \(c.path)")
                }
            }
            #expect(minted <= newOnes.count, "\(seed)")
        }
    }
}
