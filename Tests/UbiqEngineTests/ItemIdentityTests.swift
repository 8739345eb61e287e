import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// What the engine keeps of items' identity and of the user's download wishes across a restart
/// (`ItemIdentity`, `DownloadWishes`): claims, unanswered commits and wishes written as they
/// change are what a fresh engine on the same state loads; the UUIDs it makes keep their order.
@Suite("Item identity and download wishes")
struct ItemIdentityTests {
    static func id(_ n: Int) -> ItemID { NumberedIDs.item(n) }
    static func v(_ n: Int) -> VersionID { NumberedIDs.version(n) }

    @Test func claimsAndUnansweredCommitsSurviveARestart() throws {
        let dir = try TempDirectory("ubiq-identity")
        defer { dir.remove() }
        let store = try EngineStore(path: dir.path + "/state.sqlite")
        var identity = try ItemIdentity(store: store)
        identity.newLocalIDs = [11: Self.id(1), 12: Self.id(2), 13: Self.id(3)]
        try identity.claim([Self.id(1), Self.id(2)], synced: { _ in false }, inode: { [Self.id(1): 11, Self.id(2): 12][$0] })
        try identity.sending([(Self.id(1), Self.v(1), ContentHash.of([1]))])
        var again = try ItemIdentity(store: store)
        #expect(again.newLocalIDs == [11: Self.id(1), 12: Self.id(2)], "a restart knows the claimed items by inode, not the unclaimed one")
        #expect(again.sent.byItem[Self.id(1)]?.version == Self.v(1))
        // Item 2 is gone from the folder, item 1's answer came: neither is kept.
        try again.keepNew([11: Self.id(1)])
        try again.answered([Self.id(1)])
        let third = try ItemIdentity(store: store)
        #expect(third.newLocalIDs == [11: Self.id(1)] && third.sent.isEmpty)
        // Time-ordered: each UUID sorts after the one before, even within one millisecond.
        var ids = try ItemIdentity(store: store)
        let instant = Date(timeIntervalSince1970: 1_795_759_200.123)  // one millisecond for all of them
        let made = (0..<1_000).map { _ in ids.newUUID(at: instant).uuidString.lowercased() }
        #expect(made == made.sorted() && Set(made).count == made.count)
        #expect(ids.newUUID(at: instant.addingTimeInterval(0.002)).uuidString.lowercased() > made.last!, "a later clock sorts after")
        // The clock and the random bits come in (#38 §1): the same inputs make the same IDs.
        var one = try ItemIdentity(store: store), two = try ItemIdentity(store: store)
        let bits: [UInt64] = [1, 0xDEAD_BEEF, .max]
        #expect(bits.map { one.newUUID(at: instant, random: $0) } == bits.map { two.newUUID(at: instant, random: $0) })
    }

    @Test func downloadWishesSurviveARestart() throws {
        let dir = try TempDirectory("ubiq-wishes")
        defer { dir.remove() }
        let store = try EngineStore(path: dir.path + "/state.sqlite")
        let w = try DownloadWishes(store: store)
        try w.want([Self.id(1), Self.id(2)], pin: true)
        try w.evict([Self.id(2), Self.id(3)])
        try w.setPinned([Self.id(4)], true)
        try w.setPinned([Self.id(1)], false)
        let read = try DownloadWishes(store: store)
        #expect(read.pinned == [Self.id(4)] && read.evicted == [Self.id(2), Self.id(3)], "\(read.pinned) \(read.evicted)")
        try read.forgetEvictions { $0 == Self.id(3) }
        try read.want([Self.id(2)], pin: false)
        let last = try DownloadWishes(store: store)
        #expect(last.evicted.isEmpty && last.pinned == [Self.id(4)])
    }
}
