import Foundation
import Testing
import UbiqCore
@testable import UbiqStorage
import UbiqTesting

/// A commit batch asks its look-ups once for all its commits; it must still decide every
/// commit exactly as that commit alone would, in order. Two metadata stores get the same random
/// history — batches of commits (new files, updates, retries, conflicts, folders over files,
/// files in deleted folders), deletions, moves and chunk uploads between them, a clock running
/// over months so history is pruned and chunks are released — one store taking each batch with
/// `commitMany`, the other one commit at a time. Every answer and the final state must agree.
@Suite("Commit batches")
struct CommitBatchTests {
    struct Twin {
        let batched: SQLMetadataStore
        let single: SQLMetadataStore
        let ctx: AuthContext
    }

    static let container = try! ContainerID(validating: "iCloud.batch")

    @Test(arguments: DatabaseKind.available) func aBatchDecidesEveryCommitAsThatCommitAloneWould(_ kind: DatabaseKind) async throws {
        let dir = try TempDirectory("commit-batch")
        defer { dir.remove() }
        var rng = SeededRandom.forTest("commit.batch")
        guard let (batched, batchedAt) = try await kind.openStore(in: dir, name: "batched"),
              let (single, singleAt) = try await kind.openStore(in: dir, name: "single") else { return }
        var now = Date(timeIntervalSince1970: 1_800_000_000)
        let password = PasswordRecord(salt: [1], iterations: 1, derived: [2])
        let account = try await batched.createAccount(name: "alice", password: password, quota: 1 << 40, now: now)
        #expect(try await single.createAccount(name: "alice", password: password, quota: 1 << 40, now: now).id == account.id)
        let ctx = AuthContext(accountID: account.id, user: "alice", deviceID: DeviceID(uuid: UUID()), deviceName: "laptop")
        let stores = [batched, single]

        let paths = ["a", "a/x.txt", "a/y.txt", "a/b", "a/b/deep.txt", "b", "b/z.txt", "c.txt", "d.txt"].map { try! RelativePath(validating: $0) }
        // Each item has a kind and a path of its own (one of the above), mostly committed as such.
        let items = paths.map { (id: ItemID(uuid: UUID()), path: $0, kind: $0.string.hasSuffix(".txt") ? ItemKind.file : .folder) }
        // Chunks named so far: a file's chunks are new ones or any of these (maybe since released).
        var chunks: [ChunkRef] = []
        func chunk() -> ChunkRef {
            if !chunks.isEmpty && Bool.random(using: &rng) { return chunks.randomElement(using: &rng)! }
            let bytes = rng.bytes(16) + withUnsafeBytes(of: chunks.count) { Array($0) }
            chunks.append(ChunkRef(hash: ContentHash.of(bytes), size: bytes.count))
            return chunks.last!
        }
        var current: [ItemID: VersionID] = [:]
        var kinds: [ItemID: ItemKind] = [:]
        var versions: [VersionID] = []
        var outcomes: [String: Int] = [:]
        var usedFell = false

        // Fewer on PostgreSQL (each statement a round trip): the same kinds of history, half as long.
        for round in 0..<(kind == .sqlite ? 150 : 75) {
            // Between batches: the same deletions, moves and uploads on both stores.
            for _ in 0..<Int.random(in: 0...2, using: &rng) {
                let item = items.randomElement(using: &rng)!.id
                let op = Int.random(in: 0..<3, using: &rng)
                let to = paths.randomElement(using: &rng)!
                var answers: [String] = []
                for s in stores {
                    do {
                        switch op {
                        case 0: answers.append("\(try await s.delete(ctx, container: Self.container, item: item, now: now).item)")
                        case 1: answers.append("\(try await s.restore(ctx, container: Self.container, item: item, now: now).item)")
                        default:
                            answers.append("\(try await s.move(ctx, container: Self.container, item: item, to: to, now: now).item)")
                        }
                    } catch let e as StorageError { answers.append("\(e.code)") }
                }
                #expect(answers[0] == answers[1], "round \(round): \(answers)")
            }
            let upload = chunks.filter { _ in Int.random(in: 0..<4, using: &rng) == 0 }.map { ($0.hash, $0.size) }
            for s in stores { try await s.recordChunks(accountID: ctx.accountID, upload, now: Date()) }

            // A batch of commits.
            var inputs: [CommitInput] = []
            for _ in 0..<Int.random(in: 1...20, using: &rng) {
                let fresh = VersionID(uuid: UUID())
                let retry = !versions.isEmpty && Int.random(in: 0..<10, using: &rng) == 0
                let versionID = retry ? versions.randomElement(using: &rng)! : fresh
                var (itemID, path, kind) = items.randomElement(using: &rng)!
                kind = kinds[itemID] ?? kind  // as its first commit made it
                switch Int.random(in: 0..<10, using: &rng) {
                case 0: itemID = ItemID(uuid: UUID())  // the same path created on another device
                case 1: path = paths.randomElement(using: &rng)!
                case 2: kind = kind == .file ? .folder : .file
                case 3, 4, 5:  // a new file in one of the folders (live or deleted)
                    itemID = ItemID(uuid: UUID())
                    kind = .file
                    let folder = ["", "a/", "a/b/", "b/"].randomElement(using: &rng)!
                    path = try RelativePath(validating: "\(folder)n\(versions.count).txt")
                default: break
                }
                let base: VersionID? = switch Int.random(in: 0..<8, using: &rng) {
                case 0: nil
                case 1: versions.randomElement(using: &rng)
                default: current[itemID]
                }
                let refs = (0..<Int.random(in: 1...3, using: &rng)).map { _ in chunk() }
                var input = CommitInput(itemID: itemID, versionID: versionID, path: path, kind: kind, base: base,
                                        modified: now, manifest: kind == .file ? Manifest(chunks: refs) : nil)
                if Int.random(in: 0..<3, using: &rng) == 0 {
                    // The folder the device sees at the parent path: the one there, another one
                    // (moved or deleted meanwhile), or one the server has never seen.
                    input.parent = Int.random(in: 0..<5, using: &rng) == 0 ? ItemID(uuid: UUID())
                        : (items.first { $0.path == path.parent } ?? items.randomElement(using: &rng)!).id
                    if Int.random(in: 0..<3, using: &rng) == 0 { input.parent = items.randomElement(using: &rng)!.id }
                }
                if let earlier = inputs.randomElement(using: &rng), Int.random(in: 0..<4, using: &rng) == 0 {
                    // Something an earlier commit of this batch made: its path, its item, or its version.
                    input = earlier
                    switch Int.random(in: 0..<4, using: &rng) {
                    case 0: input.itemID = ItemID(uuid: UUID()); input.versionID = fresh
                    case 1:
                        input.versionID = fresh
                        input.base = Bool.random(using: &rng) ? earlier.versionID : nil
                        if Bool.random(using: &rng) { input.path = path }
                    case 2: input.itemID = itemID; input.path = path  // a retry naming something else: answered by version ID
                    default: break
                    }
                }
                inputs.append(input)
                versions.append(fresh)
            }
            let usedBefore = try await batched.usage(accountID: ctx.accountID).used
            let many = try await batched.commitMany(ctx, container: Self.container, inputs, now: now)
            var alone: [Result<CommitResult, StorageError>] = []
            for input in inputs {
                do { alone.append(.success(try await single.commit(ctx, container: Self.container, input, now: now))) } catch let e as StorageError { alone.append(.failure(e)) }
            }
            #expect(many.count == inputs.count)
            for (i, (m, a)) in zip(many, alone).enumerated() {
                #expect(Self.describe(m, cursors: kind == .sqlite) == Self.describe(a, cursors: kind == .sqlite), "round \(round), input \(i) of \(inputs.count): \(inputs[i].kind) \(inputs[i].path)")
                outcomes[Self.kindOf(m), default: 0] += 1
                if case .success(let r) = m {
                    kinds[r.item.id] = r.item.kind
                    if let v = r.item.current { current[r.item.id] = v.id }
                }
            }
            let used = try await batched.usage(accountID: ctx.accountID).used
            #expect(try await single.usage(accountID: ctx.accountID).used == used)
            if used < usedBefore { usedFell = true }
            now += TimeInterval(Int.random(in: 0...(5 * 86_400), using: &rng))
        }

        // Both stores end the same: the change feed, and every item's versions.
        let feedA = try await batched.changes(ctx, container: Self.container, after: 0, limit: 10_000)
        let feedB = try await single.changes(ctx, container: Self.container, after: 0, limit: 10_000)
        if kind == .sqlite {
            #expect(feedA.items == feedB.items && feedA.cursor == feedB.cursor)
        } else {
            func unnumbered(_ items: [ItemRecord]) -> [ItemRecord] { items.map { var i = $0; i.changeSeq = 0; return i } }
            #expect(unnumbered(feedA.items) == unnumbered(feedB.items))
        }
        for item in feedA.items {
            let a = try await batched.versions(ctx, container: Self.container, item: item.id)
            let b = try await single.versions(ctx, container: Self.container, item: item.id)
            #expect(a.current == b.current && a.conflicts == b.conflicts && a.others == b.others)
        }
        // The history covered what the batch look-ups must follow.
        print("[commit.batch] outcomes \(outcomes.sorted { $0.key < $1.key }), chunks released: \(usedFell)")
        for kind in ["created", "updated", "revived", "conflict", "unchanged", "pathExists", "invalidRequest"] {
            #expect(outcomes[kind, default: 0] > 0, "no commit was \(kind)")
        }
        #expect(usedFell, "history pruning never released a chunk")
        await DatabaseKind.dispose(batched, batchedAt)
        await DatabaseKind.dispose(single, singleAt)
    }

    /// Runs of new files (written together, several hundred at a time) interleaved with what
    /// is not one (a new folder, an update, a retry, a second file at a taken path): every
    /// answer, the change feed and every version as committing one after another gives.
    @Test(arguments: DatabaseKind.available) func runsOfNewFilesAreWrittenAsEachAloneWouldBe(_ kind: DatabaseKind) async throws {
        let dir = try TempDirectory("commit-batch-new")
        defer { dir.remove() }
        guard let (batched, batchedAt) = try await kind.openStore(in: dir, name: "batched"),
              let (single, singleAt) = try await kind.openStore(in: dir, name: "single") else { return }
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let password = PasswordRecord(salt: [1], iterations: 1, derived: [2])
        let account = try await batched.createAccount(name: "alice", password: password, quota: 1 << 40, now: now)
        _ = try await single.createAccount(name: "alice", password: password, quota: 1 << 40, now: now)
        let ctx = AuthContext(accountID: account.id, user: "alice", deviceID: DeviceID(uuid: UUID()), deviceName: "laptop")
        func chunk(_ n: Int) -> ChunkRef {
            let bytes = Array("chunk \(n)".utf8)
            return ChunkRef(hash: ContentHash.of(bytes), size: bytes.count)
        }
        func file(_ path: String, parent: ItemID? = nil, chunks: [Int], item: ItemID = ItemID(uuid: UUID()), version: VersionID = VersionID(uuid: UUID()),
                  base: VersionID? = nil) throws -> CommitInput {
            var i = CommitInput(itemID: item, versionID: version, path: try RelativePath(validating: path), kind: .file, base: base,
                                modified: now, manifest: Manifest(chunks: chunks.map(chunk)))
            i.parent = parent
            return i
        }
        // Before: a folder with a file, the same in both stores; some chunks already uploaded.
        let docs = ItemID(uuid: UUID()), old = ItemID(uuid: UUID()), oldVersion = VersionID(uuid: UUID())
        let before = [CommitInput(itemID: docs, versionID: VersionID(uuid: UUID()), path: try RelativePath(validating: "docs"), kind: .folder, base: nil, modified: now, manifest: nil),
                      try file("docs/old.txt", chunks: [0], item: old, version: oldVersion)]
        for s in [batched, single] {
            for input in before { _ = try await s.commit(ctx, container: Self.container, input, now: now) }
            try await s.recordChunks(accountID: ctx.accountID, (0..<40).map { (chunk($0).hash, chunk($0).size) }, now: now)
        }

        let folder = ItemID(uuid: UUID())
        var inputs: [CommitInput] = []
        for n in 0..<300 { inputs.append(try file("docs/n\(n).txt", parent: n % 2 == 0 ? docs : nil, chunks: [n % 50, 1_000 + n])) }
        inputs.append(CommitInput(itemID: folder, versionID: VersionID(uuid: UUID()), path: try RelativePath(validating: "new"), kind: .folder, base: nil, modified: now, manifest: nil))
        for n in 0..<300 { inputs.append(try file("new/m\(n).txt", parent: folder, chunks: [n % 7])) }
        for n in 0..<60 { inputs.append(try file("top\(n).txt", chunks: [2_000 + n % 10])) }
        inputs.append(inputs[650])  // a retry of a new file of this batch, not yet written
        for n in 60..<120 { inputs.append(try file("top\(n).txt", chunks: [n])) }
        // What stops the batch's answers (a failure, an update); then new files again.
        inputs.append(try file("top3.txt", chunks: [9_999]))  // another item at a path the batch took
        inputs.append(try file("docs/n5.txt", parent: ItemID(uuid: UUID()), chunks: [1]))  // a parent that is not the folder there
        inputs.append(try file("docs/old.txt", chunks: [5, 6], item: old, base: oldVersion))
        for n in 0..<20 { inputs.append(try file("late\(n).txt", chunks: [n])) }

        let many = try await batched.commitMany(ctx, container: Self.container, inputs, now: now)
        var alone: [Result<CommitResult, StorageError>] = []
        for input in inputs {
            do { alone.append(.success(try await single.commit(ctx, container: Self.container, input, now: now))) } catch let e as StorageError { alone.append(.failure(e)) }
        }
        var outcomes: [String: Int] = [:]
        for (i, (m, a)) in zip(many, alone).enumerated() {
            #expect(Self.describe(m, cursors: kind == .sqlite) == Self.describe(a, cursors: kind == .sqlite), "input \(i): \(inputs[i].path)")
            outcomes[Self.kindOf(m), default: 0] += 1
        }
        // (The file at a taken path replaces the one this device has not finished uploading.)
        #expect(outcomes == ["created": 300 + 1 + 300 + 60 + 60 + 20, "unchanged": 1, "itemChanged": 1, "updated": 2], "\(outcomes)")
        let feedA = try await batched.changes(ctx, container: Self.container, after: 0, limit: 10_000)
        let feedB = try await single.changes(ctx, container: Self.container, after: 0, limit: 10_000)
        func unnumbered(_ items: [ItemRecord]) -> [ItemRecord] { items.map { var i = $0; i.changeSeq = 0; return i } }
        #expect(feedA.items.count == 2 + 741)
        #expect(kind == .sqlite ? feedA.items == feedB.items : unnumbered(feedA.items) == unnumbered(feedB.items))
        #expect(feedA.items.map(\.changeSeq) == feedA.items.map(\.changeSeq).sorted(), "numbered in the batch's order")
        for item in feedA.items {
            let a = try await batched.versions(ctx, container: Self.container, item: item.id)
            let b = try await single.versions(ctx, container: Self.container, item: item.id)
            #expect(a.current == b.current && a.conflicts == b.conflicts && a.others == b.others, "\(item.path)")
        }
        #expect(try await batched.usage(accountID: ctx.accountID) == single.usage(accountID: ctx.accountID))
        await DatabaseKind.dispose(batched, batchedAt)
        await DatabaseKind.dispose(single, singleAt)
    }

    /// A new file in a deleted folder revives it; later commits of the same batch see it live.
    @Test func aFolderRevivedByABatchIsLiveForTheRestOfIt() async throws {
        let (dir, store, ctx) = try await Self.store()
        defer { dir.remove() }
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let folder = ItemID(uuid: UUID())
        func input(_ path: String, _ kind: ItemKind, item: ItemID = ItemID(uuid: UUID())) throws -> CommitInput {
            CommitInput(itemID: item, versionID: VersionID(uuid: UUID()), path: try RelativePath(validating: path), kind: kind, base: nil,
                        modified: now, manifest: kind == .file ? Manifest(chunks: [ChunkRef(hash: ContentHash.of([1]), size: 1)]) : nil)
        }
        _ = try await store.commit(ctx, container: Self.container, try input("a", .folder, item: folder), now: now)
        _ = try await store.delete(ctx, container: Self.container, item: folder, now: now)
        let results = try await store.commitMany(ctx, container: Self.container,
                                                 [try input("a/n.txt", .file), try input("a", .file), try input("a", .folder)], now: now)
        #expect(Self.kindOf(results[0]) == "created")
        #expect(Self.kindOf(results[1]) == "pathExists")  // a file where the revived folder is
        #expect(Self.kindOf(results[2]) == "unchanged")   // a folder there: the revived one
        if case .success(let r) = results[2] { #expect(r.item.id == folder && r.item.deletedAt == nil) }
    }

    /// An update prunes history and releases chunks only the pruned versions used; a later
    /// commit of the same batch naming one of them must be told to send it again.
    @Test func chunksReleasedByAnEarlierCommitOfTheBatchAreMissingForTheLaterOnes() async throws {
        let (dir, store, ctx) = try await Self.store()
        defer { dir.remove() }
        var now = Date(timeIntervalSince1970: 1_800_000_000)
        let item = ItemID(uuid: UUID())
        let path = try RelativePath(validating: "history.txt")
        var refs: [ChunkRef] = []
        var base: VersionID?
        for i in 0..<(HistoryPolicy.keepCount + 2) {  // the first two versions will be pruned
            let bytes = Array("version \(i)".utf8)
            let ref = ChunkRef(hash: ContentHash.of(bytes), size: bytes.count)
            refs.append(ref)
            try await store.recordChunks(accountID: ctx.accountID, [(ref.hash, ref.size)], now: Date())
            let v = VersionID(uuid: UUID())
            let r = try await store.commit(ctx, container: Self.container, CommitInput(itemID: item, versionID: v, path: path, kind: .file, base: base,
                                                                                        modified: now, manifest: Manifest(chunks: [ref])), now: now)
            #expect(r.version?.uploaded == true)
            base = v
            now += 60
        }
        now += HistoryPolicy.keepAge + 86_400
        let fresh = ChunkRef(hash: ContentHash.of(Array("newest".utf8)), size: 6)
        try await store.recordChunks(accountID: ctx.accountID, [(fresh.hash, fresh.size)], now: Date())
        let results = try await store.commitMany(ctx, container: Self.container, [
            CommitInput(itemID: item, versionID: VersionID(uuid: UUID()), path: path, kind: .file, base: base, modified: now, manifest: Manifest(chunks: [fresh])),
            CommitInput(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: try RelativePath(validating: "copy.txt"), kind: .file,
                        base: nil, modified: now, manifest: Manifest(chunks: [refs[0], refs[2]])),
        ], now: now)
        #expect(Self.kindOf(results[0]) == "updated")
        guard case .success(let copy) = results[1] else { Issue.record("the second commit failed: \(results[1])"); return }
        #expect(copy.missing == [refs[0].hash])  // released by the update's pruning; refs[2] is still held
        #expect(copy.version?.uploaded == false)
        #expect(try await store.ownsChunk(accountID: ctx.accountID, hash: refs[0].hash) == false)
    }

    /// Files under folders that are not live look for deleted ones to revive, once per file (all
    /// its ancestors in one statement): that look-up goes through an index, not over every item
    /// of the container.
    @Test func lookingForADeletedFolderUsesAnIndex() async throws {
        let (dir, store, _) = try await Self.store()
        defer { dir.remove() }
        let plan = try await store.read { db in
            try db.rows("EXPLAIN QUERY PLAN " + SQLQueries.deletedFolders(2), [1, "a", "a/b"]).map { try $0["detail"] as String }
        }
        #expect(plan.count == 1 && plan[0].contains("USING INDEX items_deleted_path") && !plan[0].contains("SCAN"), "\(plan)")
    }

    /// A metadata store with one account in a fresh folder (the caller removes it).
    static func store() async throws -> (TempDirectory, SQLMetadataStore, AuthContext) {
        let dir = try TempDirectory("commit-batch")
        let store = try SQLMetadataStore(path: dir.url.appendingPathComponent("meta.sqlite").path)
        let account = try await store.createAccount(name: "alice", password: PasswordRecord(salt: [1], iterations: 1, derived: [2]), quota: 1 << 40,
                                                    now: Date(timeIntervalSince1970: 1_800_000_000))
        return (dir, store, AuthContext(accountID: account.id, user: "alice", deviceID: DeviceID(uuid: UUID()), deviceName: "laptop"))
    }

    static func kindOf(_ r: Result<CommitResult, StorageError>) -> String {
        switch r {
        case .success(let c): c.outcome.rawValue
        case .failure(let e): "\(e.code)"
        }
    }

    /// What a commit answered. With `cursors` false the change numbers are left out:
    /// PostgreSQL's sequences do not roll back with a failed commit, so two stores given the same
    /// history number their changes differently (in the same order).
    static func describe(_ r: Result<CommitResult, StorageError>, cursors: Bool = true) -> String {
        switch r {
        case .success(let c):
            var item = c.item
            if !cursors { item.changeSeq = 0 }
            return "\(c.outcome) \(item) \(String(describing: c.version)) missing \(c.missing)" + (cursors ? " at \(c.cursor)" : "")
        case .failure(let e): return "\(e.code): \(e.message)"
        }
    }
}
