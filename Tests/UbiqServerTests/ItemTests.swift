import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqTesting

@Suite("Items, versions and conflicts")
struct ItemTests {
    @Test(arguments: DatabaseKind.available) func metadataFirstThenContent(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, _) = try await server.device("alice", name: "laptop")
            let (phone, _) = try await server.device("alice", name: "phone")
            var rng = SeededRandom.forTest("items.metadata-first")
            let bytes = rng.bytes(200_000)
            let m = Manifest.of(bytes)
            let item = ItemID(uuid: UUID())
            let r = try await laptop.commit(notes, CommitRequest(itemID: item, versionID: VersionID(uuid: UUID()), path: path("Documents/big.bin"),
                                                                 kind: .file, base: nil, modified: Date(), manifest: m))
            #expect(r.outcome == .created && r.version?.uploaded == false && Set(r.missing) == Set(m.chunks.map(\.hash)))
            // The phone lists the file at once, marked not uploaded.
            let seen = try await phone.changes(notes, after: 0)
            #expect(seen.items.count == 1 && seen.items[0].id == item && seen.items[0].current?.uploaded == false)
            #expect(seen.items[0].current?.size == bytes.count && seen.items[0].current?.deviceName == "laptop")
            await expectCode(.incompleteContent) { _ = try await laptop.complete(notes, version: r.version!.id) }
            try await upload(laptop, bytes)
            let done = try await laptop.complete(notes, version: r.version!.id)
            #expect(done.current?.uploaded == true)
            let after = try await phone.changes(notes, after: seen.cursor)
            #expect(after.items.map(\.id) == [item] && after.items[0].current?.uploaded == true)
            #expect(after.cursor > seen.cursor)
            let m2 = try await phone.manifest(notes, version: r.version!.id)
            #expect(m2 == m)
        }
    }

    @Test(arguments: DatabaseKind.available) func staleBaseBecomesAConflictAndResolveKeepsEverything(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, _) = try await server.device("alice", name: "laptop")
            let (phone, _) = try await server.device("alice", name: "phone")
            let first = try await commitFile(laptop, "Documents/n.txt", "v1")
            let item = first.item.id, v1 = first.version!.id
            let fromLaptop = try await commitFile(laptop, "Documents/n.txt", "laptop edit", item: item, base: v1)
            #expect(fromLaptop.outcome == .updated)
            let fromPhone = try await commitFile(phone, "Documents/n.txt", "phone edit", item: item, base: v1)
            #expect(fromPhone.outcome == .conflict && fromPhone.item.conflictCount == 1)
            #expect(fromPhone.item.current?.id == fromLaptop.version?.id)
            // Retrying the same conflicting content makes no second conflict.
            let retry = try await commitFile(phone, "Documents/n.txt", "phone edit", item: item, base: v1)
            #expect(retry.outcome == .unchanged && retry.item.conflictCount == 1)

            let versions = try await laptop.versions(notes, item: item)
            #expect(versions.current?.deviceName == "laptop")
            #expect(versions.conflicts.map(\.deviceName) == ["phone"])
            #expect(versions.others.map(\.id) == [v1])
            #expect(try await download(laptop, version: versions.conflicts[0].id) == "phone edit")

            // Resolve from the laptop by keeping the phone's version.
            let resolved = try await laptop.resolve(notes, item: item, keep: fromPhone.version!.id)
            #expect(resolved.conflictCount == 0 && resolved.current?.id == fromPhone.version!.id)
            let after = try await phone.versions(notes, item: item)
            #expect(after.current?.id == fromPhone.version!.id && after.conflicts.isEmpty)
            #expect(Set(after.others.map(\.id)) == [v1, fromLaptop.version!.id])
            // Restore the oldest version from history the same way.
            let restored = try await phone.resolve(notes, item: item, keep: v1)
            #expect(restored.current?.id == v1)
            #expect(try await download(phone, version: restored.current!.id) == "v1")
            await expectCode(.notFound) { _ = try await phone.resolve(notes, item: item, keep: VersionID(uuid: UUID())) }
        }
    }

    @Test(arguments: DatabaseKind.available) func samePathOnTwoDevicesIsOneItemWithAConflict(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, _) = try await server.device("alice", name: "laptop")
            let (phone, _) = try await server.device("alice", name: "phone")
            let a = try await commitFile(laptop, "Documents/plan.md", "laptop's plan")
            let b = try await commitFile(phone, "Documents/plan.md", "phone's plan")
            #expect(b.outcome == .conflict && b.item.id == a.item.id && b.item.conflictCount == 1)
            // Identical content at the same path is no conflict.
            let c = try await commitFile(laptop, "Documents/same.md", "same")
            let d = try await commitFile(phone, "Documents/same.md", "same")
            #expect(d.outcome == .unchanged && d.item.id == c.item.id && d.item.conflictCount == 0)
            // A folder and a file cannot share a path.
            await expectCode(.pathExists) {
                _ = try await phone.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("Documents/same.md"),
                                                                kind: .folder, base: nil, modified: Date(), manifest: nil))
            }
        }
    }

    @Test(arguments: DatabaseKind.available) func editAgainstDeleteRevivesTheItem(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, _) = try await server.device("alice", name: "laptop")
            let (phone, _) = try await server.device("alice", name: "phone")
            let folder = try await laptop.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("Documents/f"),
                                                                      kind: .folder, base: nil, modified: Date(), manifest: nil))
            let a = try await commitFile(laptop, "Documents/f/a.txt", "one")
            _ = try await laptop.delete(notes, item: folder.item.id)
            let page = try await phone.changes(notes, after: 0)
            #expect(page.items.allSatisfy(\.isDeleted) && page.items.count == 2)
            let edit = try await commitFile(phone, "Documents/f/a.txt", "edited offline", item: a.item.id, base: a.version!.id)
            #expect(edit.outcome == .revived && !edit.item.isDeleted)
            // Its folder comes back with it.
            let now = try await laptop.changes(notes, after: page.cursor)
            #expect(Set(now.items.map(\.path.string)) == ["Documents/f", "Documents/f/a.txt"])
            #expect(now.items.allSatisfy { !$0.isDeleted })
        }
    }

    /// A file edited under folders deleted two levels deep brings both back, and a live folder
    /// above them is left as it is (the ancestors' look-ups are one statement for all of them).
    @Test(arguments: DatabaseKind.available) func anEditUnderFoldersDeletedTwoDeepRevivesBoth(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, _) = try await server.device("alice", name: "laptop")
            let (phone, _) = try await server.device("alice", name: "phone")
            let docs = try await commitFolder(laptop, "Documents")
            let p = try await commitFolder(laptop, "Documents/p")
            try await commitFolder(laptop, "Documents/p/q")
            let a = try await commitFile(laptop, "Documents/p/q/a.txt", "one")
            _ = try await laptop.delete(notes, item: p.item.id)
            let page = try await phone.changes(notes, after: 0)
            #expect(page.items.filter(\.isDeleted).count == 3)
            let edit = try await commitFile(phone, "Documents/p/q/a.txt", "edited offline", item: a.item.id, base: a.version!.id)
            #expect(edit.outcome == .revived && !edit.item.isDeleted)
            let now = try await laptop.changes(notes, after: page.cursor)
            #expect(Set(now.items.map(\.path.string)) == ["Documents/p", "Documents/p/q", "Documents/p/q/a.txt"])
            #expect(now.items.allSatisfy { !$0.isDeleted })
            #expect(!now.items.contains { $0.id == docs.item.id }, "the live folder above was not touched")
        }
    }

    @Test(arguments: DatabaseKind.available) func renamesAndMovesKeepTheItemID(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (c, _) = try await server.device("alice")
            let dir = try await c.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("Documents/old"),
                                                              kind: .folder, base: nil, modified: Date(), manifest: nil))
            let x = try await commitFile(c, "Documents/old/x.txt", "x")
            let y = try await commitFile(c, "Documents/old/sub/y.txt", "y")
            let other = try await commitFile(c, "Documents/other.txt", "o")
            let moved = try await c.move(notes, item: dir.item.id, to: path("Archive/new"))
            #expect(moved.id == dir.item.id && moved.path.string == "Archive/new")
            let page = try await c.changes(notes, after: 0)
            let paths = Dictionary(uniqueKeysWithValues: page.items.map { ($0.id, $0.path.string) })
            #expect(paths[x.item.id] == "Archive/new/x.txt" && paths[y.item.id] == "Archive/new/sub/y.txt")
            // Version history is untouched by a rename.
            let renamed = try await c.move(notes, item: x.item.id, to: path("Archive/new/x2.txt"))
            #expect(renamed.current?.id == x.version?.id)
            await expectCode(.pathExists) { _ = try await c.move(notes, item: other.item.id, to: path("Archive/new/x2.txt")) }
            await expectCode(.invalidPath) { _ = try await c.move(notes, item: dir.item.id, to: path("Archive/new/inside")) }
            await expectCode(.notFound) { _ = try await c.move(notes, item: ItemID(uuid: UUID()), to: path("z")) }
        }
    }

    @Test(arguments: DatabaseKind.available) func deleteGoesToTrashAndRestoreBringsItBack(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (c, _) = try await server.device("alice")
            let a = try await commitFile(c, "Documents/a.txt", "first")
            _ = try await commitFile(c, "Documents/a.txt", "second", item: a.item.id, base: a.version!.id)
            let deleted = try await c.delete(notes, item: a.item.id)
            #expect(deleted.isDeleted)
            #expect(try await c.trash(notes).items.map(\.id) == [a.item.id])
            // The path is free again while the item is in the trash.
            let b = try await commitFile(c, "Documents/a.txt", "new file")
            #expect(b.outcome == .created && b.item.id != a.item.id)
            // Restore: the name is taken, so it comes back beside it, with its history.
            let restored = try await c.restore(notes, item: a.item.id)
            #expect(!restored.isDeleted && restored.path.string == "Documents/a (restored).txt")
            #expect(try await c.trash(notes).items.isEmpty)
            let v = try await c.versions(notes, item: a.item.id)
            #expect(v.others.count == 1)
            #expect(try await download(c, version: v.current!.id) == "second")
        }
    }

    @Test(arguments: DatabaseKind.available) func changeFeedPagesInOrder(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (c, _) = try await server.device("alice")
            var ids: [ItemID] = []
            for i in 0..<25 { ids.append(try await commitFile(c, "Documents/f\(i).txt", "\(i)").item.id) }
            var cursor: Int64 = 0
            var seen: [ItemID] = []
            var pages = 0
            while true {
                let page = try await c.changes(notes, after: cursor, limit: 7)
                seen += page.items.map(\.id)
                cursor = page.cursor
                pages += 1
                if !page.hasMore { break }
            }
            #expect(seen == ids && pages == 4)
            #expect(try await c.changes(notes, after: cursor).items.isEmpty)
            // A changed item moves to the end of the journal.
            _ = try await c.move(notes, item: ids[0], to: path("Documents/renamed.txt"))
            #expect(try await c.changes(notes, after: cursor).items.map(\.id) == [ids[0]])
        }
    }

    @Test(arguments: DatabaseKind.available) func historyIsPrunedBeyondTheNewestTwentyOnlyWhenOld(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (c, _) = try await server.device("alice")
            var r = try await commitFile(c, "h.txt", "0")
            for i in 1...25 { r = try await commitFile(c, "h.txt", "\(i)", item: r.item.id, base: r.version!.id) }
            // All versions are younger than 30 days: nothing is pruned.
            #expect(try await c.versions(notes, item: r.item.id).others.count == 25)
        }
    }
}

@Suite("Manifest deltas on the wire")
struct DeltaWireTests {
    @Test(arguments: DatabaseKind.available) func commitAndFetchManifestsAsDeltas(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (c, _) = try await server.device("alice")
            let (bob, _) = try await server.device("bob")
            var rng = SeededRandom.forTest("delta.wire")
            var bytes = rng.bytes(2_000_000)
            let first = try await commitFile(c, "big.bin", bytes: bytes)
            let baseManifest = try await c.manifest(notes, version: first.version!.id)
            bytes[1_000_000] &+= 1
            let m = try await upload(c, bytes)
            let delta = ManifestDelta.make(base: first.version!.id, baseChunks: baseManifest.chunks, new: m)
            // One edit: the chunks around it are new (one in 99.5 % of random contents, up to ten
            // while the cuts find each other again), the rest are two runs copied from the base.
            let fresh = m.chunks.filter { !Set(baseManifest.chunks).contains($0) }.count
            #expect(fresh >= 1 && delta.pieces.count <= fresh + 2, "\(fresh) new chunk(s), \(delta.pieces.count) pieces")
            #expect(delta.pieces.filter { if case .chunk = $0 { true } else { false } }.count == fresh, "only the new chunks are spelled out")
            let r = try await c.commit(notes, CommitRequest(itemID: first.item.id, versionID: VersionID(uuid: UUID()), path: path("big.bin"), kind: .file,
                                                            base: first.version!.id, modified: Date(), manifest: nil, manifestDelta: delta))
            #expect(r.outcome == .updated && r.version?.uploaded == true)
            #expect(try await c.manifest(notes, version: r.version!.id) == m)
            let back = try await c.manifestDelta(notes, version: r.version!.id, base: first.version!.id)
            #expect(try back.apply(baseChunks: baseManifest.chunks) == m)
            // A delta against a base that does not fit, or another account's version, is refused.
            var wrong = delta
            wrong.digest = .empty
            await expectCode(.invalidRequest) {
                _ = try await c.commit(notes, CommitRequest(itemID: first.item.id, versionID: VersionID(uuid: UUID()), path: path("big.bin"), kind: .file,
                                                            base: r.version!.id, modified: Date(), manifest: nil, manifestDelta: wrong))
            }
            await expectCode(.notFound) {
                _ = try await bob.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("x.bin"), kind: .file,
                                                              base: nil, modified: Date(), manifest: nil, manifestDelta: delta))
            }
        }
    }
}

/// The conditions a sync engine puts on its deletes and moves (`?since=`, `?strict=1`).
@Suite("Conditional deletes and moves")
struct ConditionalItemTests {
    @Test(arguments: DatabaseKind.available) func aDeleteSinceACursorRefusesWhatChangedAfterIt(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, _) = try await server.device("alice", name: "laptop")
            let (phone, _) = try await server.device("alice", name: "phone")
            func folder(_ p: String) async throws -> ItemRecord { try await commitFolder(laptop, p).item }
            let box = try await folder("Documents/box"), other = try await folder("Documents/other")
            let moved = try await folder("Documents/other/inner")
            let cursor = try await laptop.changes(notes, after: 0).cursor
            // The phone moves a folder into box after the laptop's cursor: box may not go.
            _ = try await phone.move(notes, item: moved.id, to: path("Documents/box/inner"), into: box.id)
            await expectCode(.itemChanged) { _ = try await laptop.delete(notes, item: box.id, unchangedSince: cursor) }
            #expect(try await laptop.changes(notes, after: 0).items.first { $0.id == box.id }?.deletedAt == nil)
            // Seen (the cursor covers the move): the delete goes through, with what box holds.
            let later = try await laptop.changes(notes, after: 0).cursor
            let gone = try await laptop.delete(notes, item: box.id, unchangedSince: later)
            #expect(gone.deletedAt != nil)
            #expect(try await laptop.changes(notes, after: later).items.contains { $0.id == moved.id && $0.deletedAt != nil })
            // A move into a named folder needs that folder at the new parent path; a plain one does not.
            await expectCode(.itemChanged) { _ = try await laptop.move(notes, item: other.id, to: path("Documents/box/other"), into: box.id) }
            await expectCode(.itemChanged) { _ = try await laptop.move(notes, item: other.id, to: path("Documents/nowhere/other"), into: box.id) }
            _ = try await laptop.move(notes, item: other.id, to: path("Documents/nowhere/other"))
            // The trash lists the deleted folder and what it held.
            let trash = try await laptop.trash(notes).items.map(\.id)
            #expect(trash.contains(box.id) && trash.contains(moved.id))
        }
    }

    /// A new item that names its folder (`parent`) lands only in that folder: another folder at
    /// the path, or that folder moved or deleted, is `item_changed`; a folder the server never
    /// saw is not checked. Reviving a deleted folder whose path another folder took answers
    /// with that folder (one folder a path, as for two new folders at one path).
    @Test(arguments: DatabaseKind.available) func aNewItemNamingItsFolderLandsOnlyInThatFolder(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, _) = try await server.device("alice", name: "laptop")
            func commit(_ p: String, _ kind: ItemKind, id: ItemID = ItemID(uuid: UUID()), parent: ItemID?) async throws -> CommitResponse {
                try await laptop.commit(notes, CommitRequest(itemID: id, versionID: VersionID(uuid: UUID()), path: path(p), kind: kind, base: nil,
                                                             modified: Date(), manifest: kind == .file ? try await upload(laptop, Array(p.utf8)) : nil,
                                                             parent: parent))
            }
            let docs = try await commit("Documents", .folder, parent: nil).item
            let box = try await commit("Documents/box", .folder, parent: docs.id).item
            #expect(try await commit("Documents/box/a.txt", .file, parent: box.id).outcome == .created)
            // Moved away: the path has no folder, the named one is elsewhere.
            _ = try await laptop.move(notes, item: box.id, to: path("Documents/crate"))
            await expectCode(.itemChanged) { _ = try await commit("Documents/box/b.txt", .file, parent: box.id) }
            // Another folder at the path.
            let other = try await commit("Documents/box", .folder, parent: docs.id).item
            await expectCode(.itemChanged) { _ = try await commit("Documents/box/c.txt", .folder, parent: box.id) }
            #expect(try await commit("Documents/box/c.txt", .file, parent: other.id).outcome == .created)
            // A folder the server never saw (the device's own new one): made with the item, as before.
            #expect(try await commit("Documents/new/d.txt", .file, parent: ItemID(uuid: UUID())).outcome == .created)
            // Deleted: refused until the device revives it (or sees it gone).
            let cursor = try await laptop.changes(notes, after: 0).cursor
            _ = try await laptop.delete(notes, item: box.id, unchangedSince: cursor)
            await expectCode(.itemChanged) { _ = try await commit("Documents/crate/e.txt", .file, parent: box.id) }
            #expect(try await commit("Documents/crate", .folder, id: box.id, parent: docs.id).outcome == .revived)
            #expect(try await commit("Documents/crate/e.txt", .file, parent: box.id).outcome == .created)
            // Revived where another folder took the path meanwhile: that folder answers.
            let c2 = try await laptop.changes(notes, after: 0).cursor
            _ = try await laptop.delete(notes, item: other.id, unchangedSince: c2)
            let third = try await commit("Documents/box", .folder, parent: docs.id).item
            let revived = try await commit("Documents/box", .folder, id: other.id, parent: docs.id)
            #expect(revived.item.id == third.id && revived.outcome == .unchanged)
        }
    }
}

/// The longest paths the server takes (names of up to 400 bytes — an encrypted account's sealed
/// names — and 4,096 bytes in all) are kept, listed, moved, deleted and restored. PostgreSQL's
/// B-tree index holds at most 2,704 bytes of one: past that a clear `invalid_path` (it was a
/// `storage_failure` the device retried).
@Suite("Longest paths")
struct LongestPathTests {
    @Test(arguments: DatabaseKind.available) func theLongestPathsAreKeptListedMovedAndRestored(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (c, _) = try await server.device("alice", name: "laptop")
            if db == .postgres {
                // PostgreSQL's index keeps at most 2,704 bytes of a path: a longer one is refused
                // as the request's fault (not a 503 the device would retry forever), and the
                // server carries on.
                var rng = SeededRandom.forTest("server.pg-path-limit")
                let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
                let long = try RelativePath(validating: (0..<8).map { _ in String((0..<390).map { _ in letters[Int(rng.next() % 64)] }) }.joined(separator: "/"))
                await expectCode(.invalidPath) {
                    _ = try await c.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: long, kind: .folder,
                                                                base: nil, modified: Date(), manifest: nil))
                }
                let short = try await c.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("a/b"), kind: .folder,
                                                                    base: nil, modified: Date(), manifest: nil))
                #expect(short.outcome == .created)
                return
            }
            // 10 folders of 400-byte names, and a file: 4,096 bytes — of random letters, as sealed
            // names are (an index may compress repeated ones).
            var rng = SeededRandom.forTest("server.longest-paths")
            let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            func random(_ n: Int) -> String { String((0..<n).map { _ in letters[Int(rng.next() % 64)] }) }
            var folders: [RelativePath] = []
            for _ in 0..<10 {
                let name = random(RelativePath.maxStoredNameBytes)
                let p = try folders.last.map { try $0.appending(name) } ?? RelativePath(validating: name)
                _ = try await c.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: p, kind: .folder,
                                                            base: nil, modified: Date(), manifest: nil))
                folders.append(p)
            }
            let fileName = random(RelativePath.maxPathBytes - folders.last!.string.utf8.count - 1)
            let file = try folders.last!.appending(fileName)
            #expect(file.string.utf8.count == RelativePath.maxPathBytes)
            #expect(throws: CoreError.self) { _ = try folders.last!.appending(fileName + "x") }
            let m = try await upload(c, Array("deep".utf8))
            let r = try await c.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: file, kind: .file,
                                                            base: nil, modified: Date(), manifest: m))
            #expect(r.outcome == .created)
            let listed = try await c.changes(notes, after: 0).items
            #expect(listed.count == 11 && listed.contains { $0.path == file && $0.current?.uploaded == true })
            // The top folder renamed: everything under it follows.
            let top = try #require(listed.first { $0.path == folders[0] })
            let renamed = try RelativePath(validating: random(RelativePath.maxStoredNameBytes - 1) + "9")
            _ = try await c.move(notes, item: top.id, to: renamed)
            let moved = try await c.changes(notes, after: 0).items
            #expect(moved.contains { $0.id == r.item.id && $0.path == file.rebased(from: folders[0], to: renamed) })
            // Deleted, the name taken again, restored: ` (restored)` after a name of 400 bytes.
            _ = try await c.delete(notes, item: top.id)
            _ = try await c.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: renamed, kind: .folder,
                                                        base: nil, modified: Date(), manifest: nil))
            let restored = try await c.restore(notes, item: top.id)
            #expect(restored.path.string.utf8.count == RelativePath.maxStoredNameBytes && restored.path.string.hasSuffix(" (restored)"))
            #expect(try await c.changes(notes, after: 0).items.contains { $0.id == r.item.id && $0.deletedAt == nil && $0.path.string.utf8.count == RelativePath.maxPathBytes })
            // A name a folder holds gets its suffix within 255 bytes.
            let leaf = try await c.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()),
                                                               path: try RelativePath(validating: String(repeating: "l", count: 250) + ".txt"),
                                                               kind: .file, base: nil, modified: Date(), manifest: m))
            _ = try await c.delete(notes, item: leaf.item.id)
            _ = try await c.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: leaf.item.path,
                                                        kind: .file, base: nil, modified: Date(), manifest: m))
            let back = try await c.restore(notes, item: leaf.item.id)
            #expect(back.path.string == String(repeating: "l", count: 240) + " (restored).txt", "\(back.path)")
        }
    }
}
