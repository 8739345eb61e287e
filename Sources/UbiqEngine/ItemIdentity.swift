import Foundation
import UbiqCore

/// How this device knows its items again before the server has answered for them: the IDs of
/// items the server has not seen yet (by inode), the part of those whose commits were sent
/// (`InodeClaims`: an engine stopped before a commit's answer came back gives the file the
/// same ID again, so the item the server made is this file's, not a stray copy), the commits
/// and moves sent whose answers were not heard (`SentCommits`), and the time-ordered UUIDs
/// this device makes. What a restart needs is written to the state database as it changes.
struct ItemIdentity {
    let store: EngineStore
    /// New items' IDs by inode (kept while the items exist and the server has not answered).
    var newLocalIDs: [UInt64: ItemID]
    private(set) var claims: InodeClaims
    /// Versions and moves sent whose answers were not heard yet; `saveSent` after changing it.
    var sent: SentCommits
    private var uuids = TimeOrderedUUIDs()

    /// Loads the claims and the unanswered commits of a container's state.
    init(store: EngineStore) throws {
        self.store = store
        self.claims = InodeClaims(text: try store.meta("claims"))
        self.newLocalIDs = claims.byInode
        self.sent = SentCommits(text: try store.meta("sent"))
    }

    /// A new UUID for an item or version this device makes: time-ordered (see
    /// `TimeOrderedUUIDs`), so the indexes keyed by them grow at their end.
    /// `random`: 64 random bits (the engine's source; tests pass their own).
    mutating func newUUID(at now: Date, random: UInt64 = .random(in: .min ... .max)) -> UUID {
        let ms = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        return uuids.next(milliseconds: ms, random: random)
    }

    /// Keeps the IDs of new items about to be committed before the commit goes out.
    mutating func claim(_ ids: [ItemID], synced: (ItemID) -> Bool, inode: (ItemID) -> UInt64?) throws {
        if claims.claim(ids, synced: synced, inode: inode) { try store.setMeta("claims", claims.text) }
    }

    /// After a scan: `stillNew` are the new items that still exist; other claims go.
    mutating func keepNew(_ stillNew: [UInt64: ItemID]) throws {
        newLocalIDs = stillNew
        if claims.prune(keeping: stillNew) { try store.setMeta("claims", claims.text) }
    }

    /// Notes commits before they go out.
    mutating func sending(_ commits: [(item: ItemID, version: VersionID, hash: ContentHash)]) throws {
        sent.sending(commits)
        try saveSent()
    }

    /// Notes that the answers of these items' commits were heard.
    mutating func answered(_ items: [ItemID]) throws {
        if sent.answered(items) { try saveSent() }
    }

    func saveSent() throws { try store.setMeta("sent", sent.text) }
}
