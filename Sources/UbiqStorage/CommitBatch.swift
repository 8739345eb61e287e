import Foundation
import UbiqCore

/// What the commits of one batch look up, asked for the whole batch at once: which of its
/// version IDs, item IDs and paths the container already holds, and which of its chunks the
/// account owns. A batch of new files (the usual one) then needs no look-up per file: four
/// `IN (…)` queries instead of four queries per file.
///
/// The answers are kept true while the batch runs: an input that creates an item adds its IDs
/// and path; an input that leaves everything unchanged changes nothing; any other input (an
/// update, a revival, a conflict, a failure, or a creation that revived deleted folders) stops
/// the answers (`current` false), and the rest of the batch asks the database each time. That
/// matters for chunks above all: an update prunes history, which can release chunks.
final class CommitBatch {
    /// Folders known to be live during the batch (see `reviveAncestors`).
    let liveFolders = LiveFolders()
    private var knownVersions: Set<String> = []
    private var knownItems: Set<String> = []
    private var livePaths: Set<String> = []
    private var owned: Set<ContentHash> = []
    private var madeVersions: Set<String> = []
    private var madeItems: Set<String> = []
    private var madePaths: Set<String> = []
    /// Parent folders a new item's `parent` was checked against: path → folder ID.
    private var checkedFolders: [String: ItemID] = [:]
    /// True while the answers asked at the start still say how the database stands.
    private(set) var current = true
    /// The account's quota, usage and chunk references when the batch began (usage only falls
    /// during a batch — history pruned — so checks against it err on the safe side).
    let quota: Int64, used: Int64, refsAtStart: Int64
    /// References the batch's kept commits added (written to the account once, at its end),
    /// and those of the commit under way (kept only if its savepoint is).
    private(set) var refsAdded: Int64 = 0
    private var refsOfInput: Int64 = 0

    /// The account's references as the batch stands.
    var refsHeld: Int64 { refsAtStart + refsAdded }

    /// Notes references the commit under way adds (see `record`).
    func addRefs(_ n: Int) { refsOfInput += Int64(n) }

    init(_ db: any SQLConnection, account: Int64, container: Int64, inputs: [CommitInput]) throws {
        knownVersions = try db.present("SELECT uuid FROM versions WHERE container_id = ? AND uuid", container, inputs.map(\.versionID.description))
        knownItems = try db.present("SELECT uuid FROM items WHERE container_id = ? AND uuid", container, inputs.map(\.itemID.description))
        livePaths = try db.present("SELECT path FROM items WHERE container_id = ? AND deleted_at IS NULL AND path", container, inputs.map(\.path.string))
        let hashes = inputs.flatMap { $0.manifest?.chunks.map(\.hash) ?? [] }
        owned = Set(hashes).subtracting(try db.missingHashes(accountID: account, hashes))
        guard let a = try db.row("SELECT quota, used, refs FROM accounts WHERE id = ?", [account]) else {
            throw StorageError(.unauthorized, "account no longer exists")
        }
        (quota, used, refsAtStart) = (try a["quota"], try a["used"], try a["refs"])
    }

    /// True if no version with this ID exists (so the commit is not a retry); false if it may.
    func versionIsNew(_ id: VersionID) -> Bool {
        let key = id.description
        return current && !knownVersions.contains(key) && !madeVersions.contains(key)
    }

    /// True if no item with this ID exists; false if one may.
    func itemIsNew(_ id: ItemID) -> Bool {
        let key = id.description
        return current && !knownItems.contains(key) && !madeItems.contains(key)
    }

    /// True if no live item has this path; false if one may.
    func pathIsFree(_ path: RelativePath) -> Bool {
        current && !livePaths.contains(path.string) && !madePaths.contains(path.string)
    }

    /// The manifest's chunks the account does not hold (deduplicated, in manifest order), as
    /// `SQLConnection.missingChunks` says; nil once the answers may be stale.
    func missing(_ manifest: Manifest) -> [ChunkRef]? {
        guard current else { return nil }
        return manifest.distinctChunks { !owned.contains($0) }
    }

    /// Notes what an input did, after its savepoint was released or rolled back.
    func record(_ input: CommitInput, _ result: Result<CommitResult, StorageError>) {
        if case .success = result { refsAdded += refsOfInput }  // a failed commit was rolled back
        refsOfInput = 0
        guard current else { return }
        switch result {
        case .success(let r) where r.outcome == .created:
            noteMade(input)
        case .success(let r) where r.outcome == .unchanged:
            break
        default:
            current = false
        }
    }

    /// Notes a new file taken to be written with the batch's other new files (``NewFiles``):
    /// from here on the batch answers as if it were written.
    func recordCreated(_ input: CommitInput) {
        refsAdded += refsOfInput
        refsOfInput = 0
        noteMade(input)
    }

    private func noteMade(_ input: CommitInput) {
        madeItems.insert(input.itemID.description)
        madePaths.insert(input.path.string)
        if input.kind == .file { madeVersions.insert(input.versionID.description) }
    }

    /// True if the live folder at `path` was seen to be `id` earlier in the batch (and nothing
    /// since could have changed that).
    func folderChecked(_ path: RelativePath, is id: ItemID) -> Bool { current && checkedFolders[path.string] == id }

    func noteFolder(_ path: RelativePath, is id: ItemID) { if current { checkedFolders[path.string] = id } }

    /// Stops the answers: the input under way changed the database in a way they do not follow.
    func invalidate() { current = false }
}

extension Manifest {
    /// The manifest's chunks whose hash passes `include`, each hash once, in manifest order.
    func distinctChunks(where include: (ContentHash) -> Bool) -> [ChunkRef] {
        var seen = Set<ContentHash>()
        return chunks.filter { include($0.hash) && seen.insert($0.hash).inserted }
    }
}
