import Foundation
import Testing
@testable import Ubiquity
import UbiqCore
import UbiqTesting

/// `MetadataQuery.pause()`/`resume()`: seeded runs of random updates with pauses between them.
/// Whatever was held back, a program that applies the notifications it is given ends with the
/// daemon's set of items, `results` never moves while paused, and a resume delivers one update.
@Suite("Metadata query pause and resume")
struct QueryPauseTests {
    static func item(_ n: Int, size: Int) -> MetadataItem {
        MetadataItem(itemID: ItemID(uuid: UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))!),
                     path: try! RelativePath(validating: "Documents/f\(n).txt"), kind: .file, size: size, modified: nil, status: .current)
    }

    @Test func aProgramFollowingTheNotificationsEndsWithTheDaemonsItems() async throws {
        var rng = SeededRandom.forTest("query.pause")
        for _ in 0..<300 {
            let query = MetadataQuery(ubiquity: Ubiquity(home: URL(fileURLWithPath: "/nonexistent")))
            var truth: [ItemID: MetadataItem] = [:]
            for n in 0..<Int.random(in: 0..<5, using: &rng) { let i = Self.item(n, size: 1); truth[i.itemID] = i }
            var program: [ItemID: MetadataItem] = [:]
            func deliver(_ n: MetadataQuery.Notification?) {
                switch n {
                case .didFinishGathering(let items)?: program = Dictionary(items.map { ($0.itemID, $0) }, uniquingKeysWith: { $1 })
                case .didUpdate(let added, let changed, let removed)?:
                    for i in added { #expect(program[i.itemID] == nil, "added twice"); program[i.itemID] = i }
                    for i in changed { #expect(program[i.itemID] != nil, "changed before added"); program[i.itemID] = i }
                    for i in removed { #expect(program.removeValue(forKey: i.itemID) != nil, "removed but not there") }
                case nil: break
                }
            }
            deliver(await query.take(event: "gathered", added: Array(truth.values), changed: [], removed: []))
            var paused = false
            for _ in 0..<Int.random(in: 1..<40, using: &rng) {
                if Int.random(in: 0..<5, using: &rng) == 0 {
                    if paused {
                        query.resume()  // no stream runs here: release() is what resume hands a stream
                        deliver(query.release())
                    } else {
                        query.pause()
                    }
                    paused.toggle()
                    continue
                }
                let before = query.results
                // One daemon batch: some new, some changed, some removed.
                var added: [MetadataItem] = [], changed: [MetadataItem] = [], removed: [MetadataItem] = []
                for _ in 0..<Int.random(in: 1..<4, using: &rng) {
                    let n = Int.random(in: 0..<8, using: &rng)
                    let id = Self.item(n, size: 0).itemID
                    guard !(added + changed + removed).contains(where: { $0.itemID == id }) else { continue }
                    if let old = truth[id] {
                        if Bool.random(using: &rng) { removed.append(old); truth[id] = nil } else {
                            let i = Self.item(n, size: old.size + 1); changed.append(i); truth[id] = i
                        }
                    } else {
                        let i = Self.item(n, size: Int.random(in: 1..<100, using: &rng)); added.append(i); truth[id] = i
                    }
                }
                let n = await query.take(event: "update", added: added, changed: changed, removed: removed)
                if paused {
                    #expect(n == nil, "nothing delivered while paused")
                    #expect(query.results == before, "results stay as they were while paused")
                }
                deliver(n)
            }
            if paused { deliver(query.release()) }
            #expect(program == truth, "the program's items are the daemon's")
            #expect(Set(query.results.map(\.itemID)) == Set(truth.keys))
        }
    }
}
