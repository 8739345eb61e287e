import Foundation
import Testing
import UbiqCore
@testable import UbiqStorage
import UbiqTesting

/// A folder's move and delete take the items under it as a range of paths (`folder/` up to
/// `folder0`): exactly its own descendants, never a sibling whose name starts the same way.
@Suite("Folder ranges")
struct FolderRangeTests {
    @Test func aFolderMoveOrDeleteTakesExactlyItsOwnDescendants() async throws {
        let (dir, store, ctx) = try await CommitBatchTests.store()
        defer { dir.remove() }
        let container = CommitBatchTests.container
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let folders = ["a", "a/b", "ab", "a0", "a-", "a/b/c"]
        let files = ["a/x.txt", "a/b/y.txt", "a/b/c/z.txt", "ab/z.txt", "a0/w.txt", "a-/v.txt", "a.txt", "b.txt"]
        var ids: [String: ItemID] = [:]
        let inputs = try (folders.map { ($0, ItemKind.folder) } + files.map { ($0, ItemKind.file) }).map { path, kind in
            let id = ItemID(uuid: UUID())
            ids[path] = id
            return CommitInput(itemID: id, versionID: VersionID(uuid: UUID()), path: try RelativePath(validating: path), kind: kind, base: nil,
                               modified: now, manifest: kind == .file ? Manifest(chunks: [ChunkRef(hash: ContentHash.of(Array(path.utf8)), size: path.utf8.count)]) : nil)
        }
        let results = try await store.commitMany(ctx, container: container, inputs, now: now)
        #expect(results.allSatisfy { CommitBatchTests.kindOf($0) == "created" })

        func live() async throws -> [String: String] {  // item ID → path, live items only
            let page = try await store.changes(ctx, container: container, after: 0, limit: 1000)
            return Dictionary(uniqueKeysWithValues: page.items.filter { $0.deletedAt == nil }.map { ($0.id.description, $0.path.string) })
        }
        // A move into a folder's own subtree is refused; a move onto a name that has items under it too.
        await #expect(throws: StorageError.self) { _ = try await store.move(ctx, container: container, item: ids["a"]!, to: try RelativePath(validating: "a/b/n"), now: now) }
        let loose = CommitInput(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: try RelativePath(validating: "q/r.txt"), kind: .file,
                                base: nil, modified: now, manifest: Manifest(chunks: [ChunkRef(hash: ContentHash.of([7]), size: 1)]))
        _ = try await store.commit(ctx, container: container, loose, now: now)  // a file in a folder never committed
        await #expect(throws: StorageError.self) { _ = try await store.move(ctx, container: container, item: ids["ab"]!, to: try RelativePath(validating: "q"), now: now) }
        _ = try await store.move(ctx, container: container, item: ids["a"]!, to: try RelativePath(validating: "m"), now: now)
        var paths = try await live()
        let moved = ["a": "m", "a/b": "m/b", "a/b/c": "m/b/c", "a/x.txt": "m/x.txt", "a/b/y.txt": "m/b/y.txt", "a/b/c/z.txt": "m/b/c/z.txt"]
        for (old, id) in ids { #expect(paths[id.description] == (moved[old] ?? old), "\(old)") }

        // Back, then deleted: its own items go to the trash, its look-alike siblings stay.
        _ = try await store.move(ctx, container: container, item: ids["a"]!, to: try RelativePath(validating: "a"), now: now)
        paths = try await live()
        for (old, id) in ids { #expect(paths[id.description] == old, "\(old)") }
        _ = try await store.delete(ctx, container: container, item: ids["a"]!, now: now)
        paths = try await live()
        for (old, id) in ids { #expect((paths[id.description] != nil) == (moved[old] == nil), "\(old)") }
        // Restored with all of its own items, and nothing else touched.
        _ = try await store.restore(ctx, container: container, item: ids["a"]!, now: now)
        paths = try await live()
        for (old, id) in ids { #expect(paths[id.description] == old, "\(old)") }
    }

    @Test func theDescendantRangeIsAnIndexSearch() async throws {
        let (dir, store, _) = try await CommitBatchTests.store()
        defer { dir.remove() }
        let plan = try await store.read { db in
            try db.rows("EXPLAIN QUERY PLAN SELECT id FROM items WHERE " + SQLQueries.liveUnder,
                        SQLQueries.under(1, try RelativePath(validating: "a"))).map { try $0["detail"] as String }
        }
        #expect(plan.count == 1 && plan[0].contains("items_live_path (container_id=? AND path>? AND path<?)"), "\(plan)")
    }
}
