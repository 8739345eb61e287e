import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// `RollbackCheck` on its own: which pages of the change feed are a rollback. Seeded: random
/// held and shown generations (or none), versions, deletions, against the rule written out.
@Suite("Rollback check")
struct RollbackCheckTests {
    @Test func anOlderGenerationShownAsCurrentIsRefusedAndNothingElse() throws {
        var rng = SeededRandom.forTest("rollback.check")
        let path = try RelativePath(validating: "Documents/a.txt")
        var refused = 0
        for _ in 0..<2_000 {
            let heldVersion = VersionID(uuid: UUID())
            let held: UInt32? = rng.next() % 5 == 0 ? nil : UInt32(rng.next() % 6)
            let shown: UInt32? = rng.next() % 5 == 0 ? nil : UInt32(rng.next() % 6)
            let same = rng.next() % 6 == 0, deleted = rng.next() % 8 == 0, known = rng.next() % 8 != 0
            var version = VersionRecord(id: same ? heldVersion : VersionID(uuid: UUID()), state: .current, size: 1, hash: ContentHash.of([1]),
                                        modified: Date(), committed: Date(), device: DeviceID(uuid: UUID()), deviceName: "A", uploaded: true)
            version.generation = shown
            let item = ItemRecord(id: ItemID(uuid: UUID()), path: path, kind: .file, current: version, conflictCount: 0,
                                  deletedAt: deleted ? Date() : nil, changeSeq: 1)
            let entry = RemoteEntry(node: RemoteNode(path: path, kind: .file, version: heldVersion, hash: ContentHash.of([2])), conflictCount: 0,
                                    modified: nil, deviceName: nil, created: nil, permissions: nil, generation: held)
            let rollback = known && !deleted && !same && held.map { (shown ?? 0) < $0 } == true
            do {
                try RollbackCheck.check(item, against: known ? entry : nil)
                #expect(!rollback, "seed \(rng.seed): held \(String(describing: held)), shown \(String(describing: shown))")
            } catch let e as CoreError {
                refused += 1
                #expect(rollback && e.code == .tampered, "seed \(rng.seed): \(e)")
            }
        }
        #expect(refused > 100, "the rounds reach the refusal (\(refused))")
    }
}
