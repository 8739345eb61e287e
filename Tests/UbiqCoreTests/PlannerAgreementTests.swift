import Foundation
import Testing
@testable import UbiqCore
import UbiqTesting

/// The planner's fast path (`Planner.agree`) may only skip items `planBoth` has nothing for.
@Suite("Planner agreement check")
struct PlannerAgreementTests {
    @Test func agreeingItemsHaveNothingToDo() throws {
        var rng = SeededRandom.forTest("planner-agree")
        let paths = try ["a", "b", "a/c"].map { try RelativePath(validating: $0) }
        let versions: [VersionID?] = [nil, VersionID(uuid: UUID()), VersionID(uuid: UUID())]
        let hashes: [ContentHash?] = [nil, ContentHash.of([1]), ContentHash.of([2])]
        let kinds: [ItemKind] = [.file, .folder]
        let id = ItemID(uuid: UUID())
        var agreeing = 0
        for _ in 0..<100_000 {
            // Local paths are their own strings, as a scan makes them.
            let lp = try RelativePath(validating: String(paths.randomElement(using: &rng)!.string.utf8.map { Character(UnicodeScalar($0)) }))
            let s = SyncedNode(path: paths.randomElement(using: &rng)!, kind: kinds.randomElement(using: &rng)!, version: versions.randomElement(using: &rng)!,
                               hash: hashes.randomElement(using: &rng)!, conflictHash: hashes.randomElement(using: &rng)!)
            // Half the items start from the synced node (so many agree); the rest are anything.
            let near = Bool.random(using: &rng)
            let l = LocalNode(path: near ? try RelativePath(validating: s.path.string + "") : lp, kind: near ? s.kind : kinds.randomElement(using: &rng)!,
                              hash: hashes.randomElement(using: &rng)!)
            let r = RemoteNode(path: near ? s.path : paths.randomElement(using: &rng)!, kind: near ? s.kind : kinds.randomElement(using: &rng)!,
                               version: near ? s.version : versions.randomElement(using: &rng)!,
                               hash: hashes.randomElement(using: &rng)!, uploaded: Bool.random(using: &rng))
            guard Planner.agree(s, l, r) else { continue }
            agreeing += 1
            for blocked in [false, true] {
                for fetchable in [false, true] {
                    let ops = Planner.planBoth(id, s, l, r, blocked: blocked && l.path != r.path, fetchable: fetchable)
                    #expect(ops.isEmpty, "agree(\(s), \(l), \(r)) but planBoth gives \(ops) (seed \(rng.seed))")
                    if !ops.isEmpty { return }
                }
            }
            // And the whole planner, over a tree of just this item, agrees too.
            var t = SyncTrees()
            t.synced[id] = s; t.local[id] = l; t.remote[id] = r
            #expect(Planner.plan(t).isEmpty)
        }
        print("planner agreement: \(agreeing) of 100000 random items agreed (seed \(rng.seed))")
        #expect(agreeing > 10_000)  // the check is exercised, not vacuous
    }
}
