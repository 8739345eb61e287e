import Foundation
import UbiqCore

/// The versions this device committed whose answers it has not heard: the request may have
/// reached the server and its answer been lost, or the engine stopped before it came. Kept in
/// the state database until the answer comes. When the change feed shows one of them as its
/// item's complete current version, the version is this device's own: the item's merge base
/// moves to it. Without that, the device's next edit went up against the older base and the
/// server kept it as a conflict with the device's own earlier content — seen with a lost answer:
/// a file caught at 0 bytes while being rewritten was sent, the answer was lost, and the full
/// file then became a conflict version while every device showed the empty one.
struct SentCommits: Sendable, Equatable {
    struct Sent: Sendable, Equatable {
        var version: VersionID
        var hash: ContentHash
    }

    private(set) var byItem: [ItemID: Sent] = [:]
    /// Moves sent whose answers were not heard, by item: where each was sent to. Kept in memory
    /// only (after a restart an unheard move looks like another device's, which loses nothing).
    private(set) var moves: [ItemID: RelativePath] = [:]

    init() {}

    /// Reads the form `text` writes; parts it cannot read are skipped.
    init(text: String?) {
        for part in (text ?? "").split(separator: ",") {
            let f = part.split(separator: ":")
            guard f.count == 3, let id = ItemID(string: String(f[0])), let v = VersionID(string: String(f[1])),
                  let h = try? ContentHash(validating: String(f[2])) else { continue }
            byItem[id] = Sent(version: v, hash: h)
        }
    }

    /// The state database's form: `item:version:hash,…` (nil when empty).
    var text: String? {
        byItem.isEmpty ? nil : byItem.map { "\($0.key):\($0.value.version):\($0.value.hash.hex)" }.sorted().joined(separator: ",")
    }

    var isEmpty: Bool { byItem.isEmpty && moves.isEmpty }

    /// A move about to go out.
    mutating func moving(_ item: ItemID, to path: RelativePath) { moves[item] = path }

    /// A move's answer was heard (whatever it said).
    mutating func moveAnswered(_ item: ItemID) { moves[item] = nil }

    /// The items the server has where this device sent them while their merge base is elsewhere:
    /// the move was this device's own (its answer lost), so the base moves there.
    func ownMoves(path: (ItemID) -> RelativePath?, base: (ItemID) -> RelativePath?) -> [(item: ItemID, to: RelativePath)] {
        moves.compactMap { id, to in
            guard path(id) == to, let b = base(id), b != to else { return nil }
            return (id, to)
        }
    }

    /// Commits about to go out (an item's later commit replaces its earlier one).
    mutating func sending(_ commits: [(item: ItemID, version: VersionID, hash: ContentHash)]) {
        for c in commits { byItem[c.item] = Sent(version: c.version, hash: c.hash) }
    }

    /// Answers heard (whatever they said): the items' merge bases were recorded from them.
    /// True if anything was dropped.
    @discardableResult
    mutating func answered(_ items: [ItemID]) -> Bool {
        var changed = false
        for id in items where byItem.removeValue(forKey: id) != nil { changed = true }
        return changed
    }

    /// The items whose complete current version on the server is one this device sent while
    /// their merge base is another: the base moves to the sent version (`hash` is its content).
    /// Versions still being uploaded are left to the server's rule for a device's own unfinished
    /// version.
    func ownVersions(current: (ItemID) -> (version: VersionID?, uploaded: Bool)?, base: (ItemID) -> VersionID?) -> [(item: ItemID, sent: Sent)] {
        byItem.compactMap { id, sent in
            guard let c = current(id), c.version == sent.version, c.uploaded, base(id) != sent.version else { return nil }
            return (id, sent)
        }
    }

    /// Drops the entries of items no tree knows any more. True if anything was dropped.
    @discardableResult
    mutating func keep(only known: (ItemID) -> Bool) -> Bool {
        moves = moves.filter { known($0.key) }
        let before = byItem.count
        byItem = byItem.filter { known($0.key) }
        return byItem.count != before
    }
}
