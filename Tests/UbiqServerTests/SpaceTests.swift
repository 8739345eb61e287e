import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqStorage
import UbiqTesting

/// A clock the test moves forward by hand.
final class HandClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date()
    var now: Date { lock.withLock { current } }
    func advance(days: Double) { lock.withLock { current += days * 86_400 } }
}

/// Space given back: an account's usage follows what it keeps — history pruned and the trash
/// purged release the chunks only they used, and nothing another version still uses.
@Suite("Space given back")
struct SpaceTests {
    /// A server on a hand-moved clock, and a device of `alice`.
    func start(_ clock: HandClock) async throws -> (TestServer, UbiqAPIClient) {
        let server = try await TestServer.start(clock: { clock.now })
        try await server.user("alice")
        return (server, try await server.device("alice").0)
    }

    @Test func prunedHistoryGivesBackTheSpaceOnlyItUsed() async throws {
        let clock = HandClock()
        let (server, c) = try await start(clock)
        var rng = SeededRandom.forTest("space.history")
        let contents = (0..<26).map { _ in rng.bytes(3000) }  // one chunk each, named by its hash
        _ = try await commitFile(c, "keep.bin", bytes: contents[0])  // the first version's content, kept by another file
        var r = try await commitFile(c, "h.bin", bytes: contents[0])
        for i in 1..<26 {
            clock.advance(days: 2)
            r = try await commitFile(c, "h.bin", bytes: contents[i], item: r.item.id, base: r.version!.id)
        }
        // 26 versions over 50 days: the 5 oldest history versions are beyond the newest 20 and
        // older than 30 days, so they were pruned as the commits went.
        let list = try await c.versions(notes, item: r.item.id)
        #expect(list.others.count == 20 && list.current?.size == 3000)
        // Held: keep.bin (= version 0's content) and versions 5...25; versions 1...4 given back.
        #expect(try await c.account().used == 22 * 3000)
        let missing = try await c.missingChunks([ContentHash.of(contents[1]), ContentHash.of(contents[0]), ContentHash.of(contents[5])])
        #expect(missing == [ContentHash.of(contents[1])], "a released chunk is missing again; shared and kept ones are not")
        // The same content committed again is simply uploaded again, and reads back.
        let again = try await commitFile(c, "again.bin", bytes: contents[1])
        #expect(try await c.account().used == 23 * 3000)
        #expect(try await download(c, version: again.version!.id) == String(decoding: contents[1], as: UTF8.self))
        await server.stop()
    }

    @Test func theTrashIsPurgedAfterThirtyDaysGivingItsSpaceBack() async throws {
        let clock = HandClock()
        var (server, c) = try await start(clock)
        var rng = SeededRandom.forTest("space.trash")
        let oldBytes = rng.bytes(5000), youngBytes = rng.bytes(7000), keptBytes = rng.bytes(2000)
        let old = try await commitFile(c, "Documents/old.bin", bytes: oldBytes)
        let young = try await commitFile(c, "Documents/young.bin", bytes: youngBytes)
        _ = try await commitFile(c, "Documents/kept.bin", bytes: keptBytes)
        _ = try await c.delete(notes, item: old.item.id)
        clock.advance(days: 20)
        _ = try await c.delete(notes, item: young.item.id)
        #expect(try await c.account().used == 14_000)
        // Day 20: nothing has been in the trash for 30 days.
        #expect(try await server.services.purgeTrash().items == 0)
        #expect(try await c.trash(notes).items.count == 2)
        // Day 35: old.bin has; young.bin has not.
        clock.advance(days: 15)
        let purged = try await server.services.purgeTrash()
        #expect(purged.items == 1 && purged.bytes == 5000)
        #expect(try await c.trash(notes).items.map(\.path.string) == ["Documents/young.bin"])
        #expect(try await c.account().used == 9000)
        let e = await #expect(throws: ClientError.self) { _ = try await c.restore(notes, item: old.item.id) }
        #expect(e?.code == .notFound && e?.message.contains("purged") == true, "\(e?.message ?? "")")
        // A device that missed everything still learns from the change feed that it was deleted.
        let feed = try await c.changes(notes, after: 0).items
        #expect(feed.contains { $0.id == old.item.id && $0.deletedAt != nil && $0.current == nil })
        // The server purges by itself: started again 31 days later, young.bin goes too.
        await server.stop(keepData: true)
        clock.advance(days: 31)
        server = try await TestServer.start(directory: server.directory, clock: { clock.now })
        c = UbiqAPIClient(baseURL: server.baseURL, token: c.token)
        let client = c
        #expect(await eventually(timeout: .seconds(20)) { (try? await client.trash(notes).items.isEmpty) == true })
        #expect(try await c.account().used == 2000)
        await server.stop()
    }
    /// #23 row 7: a commit of a manifest of 100,000 tiny chunks with nothing uploaded cost no
    /// quota and grew the database by 17 MB; repeated, without bound. Every chunk reference a
    /// version holds now counts against the account's budget (`ChunkReferenceBudget`: one entry
    /// per KiB of quota, 65,536 at least), uploaded or not, repeated or not, and comes back when
    /// the version goes. The version itself is one entry more.
    @Test func chunkReferencesAreBoundedByTheQuotaAndGivenBack() async throws {
        let clock = HandClock()
        let server = try await TestServer.start(clock: { clock.now })
        try await server.user("mallory", quota: 64 << 20)  // 65,536 references
        let c = try await server.device("mallory").0
        func request(_ name: String, _ refs: [ChunkRef]) -> CommitRequest {
            CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("Documents/\(name)"),
                          kind: .file, base: nil, modified: clock.now, manifest: Manifest(chunks: refs))
        }
        func commit(_ name: String, _ refs: [ChunkRef]) async throws -> CommitResponse { try await c.commit(notes, request(name, refs)) }
        // 40,000 distinct one-byte chunks, none uploaded: accepted (40 KB of a 64 MiB quota; 40,001 entries).
        let tiny = (0..<40_000).map { i in ChunkRef(hash: ContentHash.of(Array("tiny \(i)".utf8)), size: 1) }
        let a = try await commit("a.bin", tiny)
        #expect(a.missing.count == 40_000 && a.version?.uploaded == false)
        // One chunk repeated 30,000 times: past the budget, whatever the bytes.
        let repeated = Array(repeating: ChunkRef(hash: ContentHash.of([7]), size: 1), count: 30_000)
        let e = await #expect(throws: ClientError.self) { _ = try await commit("b.bin", repeated) }
        #expect(e?.code == .storageFull && e?.message.contains("chunk references") == true, "\(e?.message ?? "")")
        let feed = try await c.changes(notes, after: 0).items
        #expect(feed.map(\.path.string) == ["Documents/a.bin"], "nothing of the refused commit stored")
        // What fits still fits: 65,002 held.
        _ = try await commit("c.bin", Array(repeated.prefix(25_000)))
        // A batch counts as it goes (and writes its total once): 301 fit, 301 more do not.
        let batch = try await c.commitMany(notes, [request("d.bin", Array(repeated.prefix(300))), request("e.bin", Array(repeated.prefix(300)))])
        #expect(batch[0].response != nil && batch[1].error?.code == .storageFull, "\(batch.map { $0.error?.message ?? "ok" })")
        // 65,303 held: 233 chunks (234 entries) would pass 65,536; 232 do not.
        await #expect(throws: ClientError.self) { _ = try await commit("f.bin", Array(repeated.prefix(233))) }
        _ = try await commit("f.bin", Array(repeated.prefix(232)))
        // Deleted and purged, a.bin's references come back.
        _ = try await c.delete(notes, item: a.item.id)
        clock.advance(days: 31)
        #expect(try await server.services.purgeTrash().items == 1)
        _ = try await commit("b.bin", repeated)  // 40,001 free again (it was refused with 534 free)
        await server.stop()
    }

    /// #45 row 2: folders and empty files were free — an account with a 1 MiB quota kept 2,000
    /// folders and `used` stayed 0, without bound. A folder costs an entry while it is live or in
    /// the trash, an empty file's version one; both come back when the trash is purged, and a
    /// folder brought back from the trash counts again.
    @Test func foldersAndEmptyFilesCountAgainstTheBudgetAndComeBack() async throws {
        let clock = HandClock()
        let server = try await TestServer.start(clock: { clock.now })
        try await server.user("mallory", quota: 1 << 20)  // the floor: 65,536 entries
        let c = try await server.device("mallory").0
        let account = try #require(try await server.services.metadata.account(named: "mallory")).id
        func room() async throws -> Int64 { try await server.services.metadata.referenceRoom(accountID: account) }
        func folder(_ p: String) async throws -> CommitResponse {
            try await c.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path(p),
                                                    kind: .folder, base: nil, modified: clock.now, manifest: nil))
        }
        #expect(try await room() == 65_536)
        // Ten folders (one in a batch beside a file) and three empty files: thirteen entries.
        var folders: [ItemID] = []
        for i in 0..<9 { folders.append(try await folder("Documents/d\(i)").item.id) }
        let batch = try await c.commitMany(notes, [
            CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("Documents/d9"), kind: .folder,
                          base: nil, modified: clock.now, manifest: nil),
            CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("Documents/d9/empty0"), kind: .file,
                          base: nil, modified: clock.now, manifest: Manifest(chunks: [])),
        ])
        #expect(batch.allSatisfy { $0.response != nil }, "\(batch.map { $0.error?.message ?? "ok" })")
        for i in 1..<3 { _ = try await commitFile(c, "Documents/empty\(i)", bytes: []) }
        #expect(try await room() == 65_536 - 13)
        #expect(try await c.account().used == 0, "no bytes: the entries are counted apart")
        // Filled to one entry short with a version of unuploaded one-byte chunks: one folder
        // fits, the next folder and an empty file do not.
        let filler = (0..<(65_536 - 13 - 2)).map { i in ChunkRef(hash: ContentHash.of(Array("filler \(i)".utf8)), size: 1) }
        let big = try await c.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("big.bin"),
                                                          kind: .file, base: nil, modified: clock.now, manifest: Manifest(chunks: filler)))
        #expect(try await room() == 1)
        _ = try await folder("Documents/last")
        await expectCode(.storageFull) { _ = try await folder("Documents/one-too-many") }
        await expectCode(.storageFull) { _ = try await commitFile(c, "Documents/empty-too-many", bytes: []) }
        #expect(try await c.changes(notes, after: 0).items.allSatisfy { !$0.path.string.contains("too-many") }, "nothing refused was stored")
        // Trashed, a folder still costs (it can come back); purged, it is given back.
        _ = try await c.delete(notes, item: folders[0])
        _ = try await c.delete(notes, item: big.item.id)
        #expect(try await room() == 0)
        clock.advance(days: 31)
        #expect(try await server.services.purgeTrash().items == 2)
        #expect(try await room() == 1 + filler.count + 1, "the folder's entry and the big file's (its chunks and itself) came back")
        // A purged folder made live again by a file committed inside it counts again.
        let before = try await room()
        _ = try await commitFile(c, "Documents/d0/inside", bytes: [])
        #expect(try await room() == before - 2, "the empty file and the folder it brought back")
        await server.stop()
    }

    /// #45 row 2: a purged item stays as a delete in the change feed, and nothing forgot them —
    /// a loop of make, delete, empty the trash grew the database without bound. An account keeps
    /// its newest `deletesKept`; older ones are forgotten and a feed asked from before them is
    /// `cursor_expired` (the device reads it whole again).
    @Test(arguments: DatabaseKind.available) func purgedItemsDeletesAreKeptUpToANumberThenForgotten(_ kind: DatabaseKind) async throws {
        try await withServer(kind) { server in
            let store = try #require(server.services.metadata as? SQLMetadataStore)
            store.deletesKept.store(3, ordering: .relaxed)
            let (c, _) = try await server.device("alice")
            let cursorAtStart = try await c.changes(notes, after: 0).cursor
            let kept = try await commitFile(c, "Documents/kept.txt", "stays")
            var ids: [ItemID] = []
            for i in 0..<5 {
                ids.append(try await c.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("Documents/d\(i)"),
                                                                   kind: .folder, base: nil, modified: Date(), manifest: nil)).item.id)
            }
            let seen = try await c.changes(notes, after: 0).cursor  // a device that saw the folders
            for id in ids { _ = try await c.delete(notes, item: id) }
            let afterDeletes = try await c.changes(notes, after: 0).cursor
            #expect(try await c.emptyTrash(notes).items == 5)
            // The three newest deletes stay; the two oldest are gone from the feed.
            let all = try await c.changes(notes, after: 0).items
            #expect(Set(all.filter { $0.deletedAt != nil }.map(\.id)) == Set(ids.suffix(3)))
            #expect(all.contains { $0.id == kept.item.id && $0.deletedAt == nil })
            // A device that saw the folders but not their deletes must read the feed whole again;
            // one that saw the deletes goes on.
            await expectCode(.cursorExpired) { _ = try await c.changes(notes, after: seen) }
            if cursorAtStart > 0 { await expectCode(.cursorExpired) { _ = try await c.changes(notes, after: cursorAtStart) } }
            #expect(try await c.changes(notes, after: afterDeletes).items.isEmpty)
            // Other accounts' feeds are untouched.
            let (bob, _) = try await server.device("bob")
            #expect(try await bob.changes(notes, after: 1).items.isEmpty)
        }
    }

    /// #45 row 2: containers are made on first use and cost rows the quota did not count (2,000
    /// folders in new containers left `used` at 0). An account has at most 256.
    @Test func anAccountHasAtMost256Containers() async throws {
        try await withServer { server in
            let (c, _) = try await server.device("alice")
            func folder(in container: ContainerID) async throws {
                _ = try await c.commit(container, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("Documents"),
                                                                kind: .folder, base: nil, modified: Date(), manifest: nil))
            }
            // `notes` is one already (withServer made none: the first commit makes it).
            for i in 0..<256 { try await folder(in: try ContainerID(validating: "TEAM.many.c\(i)")) }
            await expectCode(.storageFull) { try await folder(in: try ContainerID(validating: "TEAM.many.c256")) }
            // The containers it has still take commits.
            _ = try await c.commit(try ContainerID(validating: "TEAM.many.c0"), CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()),
                                                                                               path: path("Documents/more"), kind: .folder, base: nil, modified: Date(), manifest: nil))
        }
    }
}
