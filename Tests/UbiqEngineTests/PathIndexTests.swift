import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// `PathIndex` kept item by item against an index made afresh: seeded random runs of items
/// added, moved (onto each other's paths too, as a feed page can show for a moment), swapped
/// and removed, in any order.
@Suite("Path index")
struct PathIndexTests {
    @Test func keptItemByItemItAgreesWithAnIndexMadeAfresh() {
        var rng = SeededRandom.forTest("path.index")
        let ids = (0..<40).map { _ in ItemID(uuid: UUID()) }
        let paths = (0..<25).map { try! RelativePath(validating: "Documents/p\($0)") }
        var steps = 0, sharedSeen = 0
        for _ in 0..<200 {
            var tree: [ItemID: RelativePath] = [:]
            var index = PathIndex()
            for _ in 0..<Int.random(in: 1...80, using: &rng) {
                let id = ids.randomElement(using: &rng)!
                let old = tree[id]
                let new: RelativePath? = Int.random(in: 0..<5, using: &rng) == 0 ? nil : paths.randomElement(using: &rng)!
                tree[id] = new
                index.moved(id, from: old, to: new)
                #expect(index.agrees(with: tree), "after \(id) \(old?.string ?? "-") → \(new?.string ?? "-")")
                if Set(tree.values).count < tree.count { sharedSeen += 1 }
                steps += 1
            }
            #expect(PathIndex(tree, path: { $0 }).agrees(with: tree))
        }
        print("[path.index] \(steps) steps, \(sharedSeen) with a path shared")
        #expect(sharedSeen > 100)
    }
}
