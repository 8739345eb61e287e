import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// The record of commits whose answers were not heard (`SentCommits`): kept across restarts,
/// and a sent version becomes the merge base only when the server has it complete and current.
@Suite("Sent commits")
struct SentCommitsTests {
    static func id(_ n: Int) -> ItemID { NumberedIDs.item(n) }
    static func v(_ n: Int) -> VersionID { NumberedIDs.version(n) }

    @Test func theRecordSurvivesARestartAndDamagedPartsAreSkipped() {
        var s = SentCommits()
        s.sending([(Self.id(1), Self.v(1), ContentHash.of([1])), (Self.id(2), Self.v(2), ContentHash.of([2]))])
        s.sending([(Self.id(1), Self.v(3), ContentHash.of([3]))])  // a later commit of item 1 replaces the first
        let read = SentCommits(text: s.text)
        #expect(read == s)
        #expect(read.byItem[Self.id(1)]?.version == Self.v(3))
        let damaged = SentCommits(text: (s.text ?? "") + ",nonsense,a:b:c,\(Self.id(9)):\(Self.v(9)):zz")
        #expect(damaged == s)
        var answered = s
        let dropped = answered.answered([Self.id(1), Self.id(2)])
        #expect(dropped && answered.text == nil && answered.isEmpty)
        let again = answered.answered([Self.id(1)])
        #expect(!again)
    }

    @Test func aSentVersionIsTheBaseOnlyWhenCompleteAndCurrent() {
        var s = SentCommits()
        for n in 1...5 { s.sending([(Self.id(n), Self.v(n), ContentHash.of([UInt8(n)]))]) }
        let current: [ItemID: (VersionID?, Bool)] = [
            Self.id(1): (Self.v(1), true),    // ours, complete, base older: adopted
            Self.id(2): (Self.v(2), false),   // ours but still being uploaded: left to the server's rule
            Self.id(3): (Self.v(99), true),   // another version is current: not ours to take
            Self.id(4): (Self.v(4), true),    // ours and already the base: nothing to do
        ]                                     // item 5: the server has no such item (the request was lost)
        let own = s.ownVersions(current: { current[$0].map { (version: $0.0, uploaded: $0.1) } },
                                base: { $0 == Self.id(4) ? Self.v(4) : Self.v(0) })
        #expect(own.map(\.item) == [Self.id(1)])
        #expect(own.first?.sent.hash == ContentHash.of([1]))
        let kept = s.keep { $0 != Self.id(5) }
        #expect(kept && s.byItem.count == 4)
    }
}
