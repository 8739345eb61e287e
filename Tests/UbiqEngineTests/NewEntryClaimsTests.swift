import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// The claims of new entries after a partial walk (`FolderScans.claimNew`) against the claims
/// of the whole folder (`IdentityClaims`), on seeded random trees: synced items deleted here
/// (their paths taken again, by the same kind or another), server items never synced here,
/// folders moved here and not yet on the server (a new file where a synced one was before the
/// move), this device's unanswered moves, IDs given to inodes before — then new files and
/// folders at fresh paths and at each of those. Every new entry must get the item the whole
/// claims give it, but for new IDs (each side makes its own).
@Suite("Claims of new entries")
struct NewEntryClaimsTests {
    static func p(_ s: String) -> RelativePath { try! RelativePath(validating: s) }

    @Test func newEntriesGetTheItemsTheWholeFoldersClaimsGive() throws {
        var rng = SeededRandom.forTest("claims.new")
        var serial: UInt64 = 0
        func newID() -> ItemID {
            serial += 1
            return ItemID(uuid: UUID(uuidString: String(format: "00000000-0000-0000-0000-%012llX", serial))!)
        }
        var nextInode: UInt64 = 5000
        func stamp(_ size: Int64 = 0) -> FileStamp { nextInode += 1; return FileStamp(inode: nextInode, size: size, mtimeNanos: 7, ctimeNanos: 7) }
        var checked = 0, fresh = 0, reused = 0
        for round in 0..<400 {
            // Synced (and on the server): Documents, folders, files.
            var synced: [ItemID: SyncedEntry] = [:], remote: [ItemID: RemoteEntry] = [:]
            var entries: [RelativePath: LocalEntry] = [:]
            func add(_ path: RelativePath, _ kind: ItemKind, local: Bool = true, onServerOnly: Bool = false) -> ItemID {
                let id = newID(), st = stamp(kind == .file ? 3 : 0)
                if !onServerOnly {
                    synced[id] = SyncedEntry(node: SyncedNode(path: path, kind: kind, version: nil, hash: kind == .file ? .empty : nil),
                                             stamp: st, stampHash: kind == .file ? .empty : nil)
                }
                remote[id] = RemoteEntry(node: RemoteNode(path: path, kind: kind, version: nil, hash: nil), conflictCount: 0)
                if local { entries[path] = LocalEntry(kind: kind, stamp: st) }
                return id
            }
            _ = add(Self.p("Documents"), .folder)
            let folders = (0..<Int.random(in: 1...3, using: &rng)).map { Self.p("Documents/d\($0)") }
            var folderIDs: [RelativePath: ItemID] = [:]
            for f in folders { folderIDs[f] = add(f, .folder) }
            var gone: [RelativePath] = [], serverOnly: [RelativePath] = []
            for i in 0..<Int.random(in: 2...8, using: &rng) {
                let path = try folders.randomElement(using: &rng)!.appending("f\(i).txt")
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: _ = add(path, .file, local: false); gone.append(path)  // deleted here, not yet on the server
                case 1: _ = add(path, .file, local: false, onServerOnly: true); serverOnly.append(path)  // another device's, not here yet
                default: _ = add(path, .file)
                }
            }
            // A folder moved here (its move not on the server yet): everything in it has a new path.
            var movedFolder: (from: RelativePath, to: RelativePath)?
            if Bool.random(using: &rng), let f = folders.last, let id = folderIDs[f] {
                let to = Self.p("Documents/moved\(round)")
                for (p, e) in entries where p.isSelfOrDescendant(of: f) {
                    entries[p] = nil
                    entries[p.rebased(from: f, to: to)] = e
                }
                movedFolder = (f, to)
                _ = id
            }
            // This device's moves whose answers it has not heard, and a new item made before.
            var movedTo: [ItemID: RelativePath] = [:]
            if Bool.random(using: &rng), let victim = synced.first(where: { $0.value.node.kind == .file && entries[$0.value.node.path] == nil })?.key {
                movedTo[victim] = Self.p("Documents/sent-away\(round).txt")
            }
            let madeBefore = Self.p("Documents/made-before.txt")
            entries[madeBefore] = LocalEntry(kind: .file, stamp: stamp(1))

            // The last claims (a full walk), and the IDs of new items they keep.
            let first = IdentityClaims(synced: synced, remote: remote, newLocalIDs: [:], movedTo: movedTo).claim(entries, opaque: [], newID: newID).result
            var newLocalIDs: [UInt64: ItemID] = [:]
            for (id, l) in first where synced[id] == nil { newLocalIDs[l.entry.stamp.inode] = id }
            // An ID given to an inode before whose item is gone (a file made, seen, deleted, made again: the inode is new).
            let lostInode = stamp().inode
            newLocalIDs[lostInode] = newID()

            // New entries: at fresh paths, where synced items were deleted (same kind or not),
            // where server items are, in the moved folder where a deleted file was, at an
            // unanswered move's target, and with an inode given an ID before.
            var added: [(RelativePath, LocalEntry)] = []
            func new(_ path: RelativePath, _ kind: ItemKind, inode: UInt64? = nil) {
                guard entries[path] == nil, !added.contains(where: { $0.0 == path }) else { return }
                var st = stamp(kind == .file ? 9 : 0)
                if let inode { st.inode = inode }
                added.append((path, LocalEntry(kind: kind, stamp: st)))
            }
            for _ in 0..<Int.random(in: 1...4, using: &rng) { new(try folders.randomElement(using: &rng)!.appending("n\(Int.random(in: 0..<99, using: &rng)).txt"), .file) }
            if Bool.random(using: &rng) { new(Self.p("Documents/newdir\(round)"), .folder) }
            for g in gone { new(g, Bool.random(using: &rng) ? .file : .folder) }
            for s in serverOnly where Bool.random(using: &rng) { new(s, .file) }
            if let m = movedFolder, let g = gone.first(where: { $0.isSelfOrDescendant(of: m.from) }) { new(g.rebased(from: m.from, to: m.to), .file) }
            for (_, to) in movedTo { new(to, .file) }
            if Bool.random(using: &rng) { new(Self.p("Documents/again\(round).txt"), .file, inode: lostInode) }

            // Claimed alone, then as part of the whole folder.
            let log = UbiqEngine.ChangeLog()
            let local = TrackedMap(first, log: log), syncedMap = TrackedMap(synced, log: log), remoteMap = TrackedMap(remote, log: log)
            var all = entries
            for (p, e) in added { all[p] = e }
            let (localIndex, syncedIndex, remoteIndex) = (PathIndex(first, path: \.path), PathIndex(synced, path: \.node.path), PathIndex(remote, path: \.node.path))
            let facts = FolderScans.NewItemFacts(newLocalIDs: newLocalIDs, movedTo: movedTo, localAt: { localIndex[$0] }, syncedAt: { syncedIndex[$0] },
                                                 remoteAt: { remoteIndex[$0] })
            let claimedAlone = FolderScans.claimNew(added, entries: all, local: local, synced: syncedMap, remote: remoteMap, facts: facts, newID: newID)
            let mine = claimedAlone
            let whole = IdentityClaims(synced: synced, remote: remote, newLocalIDs: newLocalIDs, movedTo: movedTo).claim(all, opaque: [], newID: newID).result
            let known = Set(synced.keys).union(remote.keys).union(newLocalIDs.values).union(movedTo.keys)
            for (path, e) in added {
                let w = try #require(whole.first { $0.value.path == path }, "round \(round): \(path) not claimed by the whole claims")
                let m = try #require(mine.claimed.first { $0.value.path == path }, "round \(round): \(path) not claimed alone")
                #expect(m.value.entry == e)
                if known.contains(w.key) || known.contains(m.key) {
                    #expect(w.key == m.key, "round \(round): \(path) is \(m.key) alone, \(w.key) in the whole folder")
                    reused += 1
                } else {
                    fresh += 1
                }
                checked += 1
            }
            // And nothing else changes: the whole claims keep every earlier entry's item.
            for (id, l) in first { #expect(whole[id].map { $0.path == l.path && $0.entry == l.entry } == true, "round \(round): \(l.path)") }
            #expect(whole.count == first.count + added.count)
        }
        print("[claims.new] \(checked) new entries: \(reused) took an existing item, \(fresh) a new one")
        #expect(reused > 100 && fresh > 100)
    }

    /// An entry a partial walk found at a path the Local tree has (the engine may have placed
    /// it there since the last claims) is an edit of that item; one of another identity or kind
    /// there sends the scan to the whole folder's claims; one at a path the tree lacks is new.
    @Test func anEntryAtAPathTheLocalTreeHasIsThatItem() throws {
        let log = UbiqEngine.ChangeLog()
        let id = ItemID(uuid: UUID()), path = Self.p("Documents/placed.txt"), other = Self.p("Documents/other.txt")
        let st = FileStamp(inode: 77, size: 4, mtimeNanos: 1, ctimeNanos: 1)
        let local = TrackedMap([id: (path: path, entry: LocalEntry(kind: .file, stamp: st))], log: log)
        func edits(_ entries: [RelativePath: LocalEntry]) -> (changed: [ItemID: (path: RelativePath, entry: LocalEntry)], check: [ItemID], added: [RelativePath])? {
            var added: [(RelativePath, LocalEntry)] = []
            let r = FolderScans.edits(entries, local: local, synced: TrackedMap(log: log), itemAt: { $0 == path ? id : nil }, added: &added)
            return r.map { ($0.changed, $0.check, added.map(\.0)) }
        }
        var edited = st
        edited.size = 5
        let same = try #require(edits([path: LocalEntry(kind: .file, stamp: edited), other: LocalEntry(kind: .file, stamp: st)]))
        #expect(same.changed[id]?.entry.stamp == edited && same.check == [id] && same.added == [other])
        var swapped = st
        swapped.inode = 78
        #expect(edits([path: LocalEntry(kind: .file, stamp: swapped)]) == nil)
        #expect(edits([path: LocalEntry(kind: .folder, stamp: st)]) == nil)
    }
}
