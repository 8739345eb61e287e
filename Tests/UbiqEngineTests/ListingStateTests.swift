import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// `ListingState.all` lists a large account in slices on every core (#42: a live query's
/// gathering): the same items as one pass would, each once, with what a filter leaves dropped.
@Suite("Listing in slices")
struct ListingStateTests {
    @Test func slicesListEveryItemOnceAsOnePassWould() throws {
        var rng = SeededRandom.forTest("listing.slices")
        for round in 0..<3 {
            let n = 8_192 + Int(rng.next() % 20_000)
            var remote: [ItemID: RemoteEntry] = [:], local: [ItemID: (path: RelativePath, entry: LocalEntry)] = [:]
            var synced: [ItemID: SyncedEntry] = [:]
            for i in 0..<n {
                let id = ItemID(uuid: UUID()), path = try RelativePath(validating: "d\(i % 97)/f\(i).txt")
                let v = VersionID(uuid: UUID()), hash = ContentHash.of(Array("\(i)".utf8))
                remote[id] = RemoteEntry(node: RemoteNode(path: path, kind: .file, version: v, hash: hash, size: i % 5000), conflictCount: 0,
                                         modified: nil, deviceName: nil, created: nil, permissions: nil)
                if rng.next() % 3 != 0 {
                    local[id] = (path, LocalEntry(kind: .file, stamp: FileStamp(inode: UInt64(i), size: Int64(i % 5000), mtimeNanos: 0, ctimeNanos: 0)))
                    synced[id] = SyncedEntry(node: SyncedNode(path: path, kind: .file, version: v, hash: hash), stamp: nil, stampHash: nil)
                }
            }
            let localOnly = ItemID(uuid: UUID())
            local[localOnly] = (try RelativePath(validating: "new.txt"), LocalEntry(kind: .file, stamp: FileStamp(inode: 1, size: 3, mtimeNanos: 0, ctimeNanos: 0)))
            let state = ListingState(remote: remote, local: local, synced: synced, localHashes: [:], transfers: [:], itemErrors: [:], excluded: [:])
            let all = state.all()
            #expect(all.count == n + 1 && Set(all.map(\.itemID)).count == n + 1, "seed \(rng.seed) round \(round)")
            for m in all.prefix(500) {
                #expect(m == (m.itemID == localOnly ? state.item(localOnly) : state.listed(m.itemID, remote[m.itemID]!)), "seed \(rng.seed)")
            }
            let small = state.all(where: { $0.size < 100 })
            let expected = Set(all.filter { $0.size < 100 }.map(\.itemID))
            #expect(Set(small.map(\.itemID)) == expected && small.count == expected.count, "seed \(rng.seed) round \(round)")
        }
    }
}
