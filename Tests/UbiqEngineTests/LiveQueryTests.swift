import Foundation
import Testing
import UbiqCore
import UbiqEngine
import UbiqTesting

/// Collects a live query's notifications for a test to wait on.
actor QueryLog {
    var gathered: [MetadataItem]?
    var updates: [QueryDiff] = []
    func note(_ n: LiveQuery.Notification) {
        switch n {
        case .didFinishGathering(let items): gathered = items
        case .didUpdate(let d): updates.append(d)
        }
    }
    var added: [MetadataItem] { updates.flatMap(\.added) }
    var changed: [MetadataItem] { updates.flatMap(\.changed) }
    var removed: [MetadataItem] { updates.flatMap(\.removed) }
    var count: Int { updates.count }
}

/// The live metadata query (product §5) against real devices.
@Suite("Live metadata query", .serialized)
struct LiveQueryTests {
    @Test func updatesArriveInBatchesWithTransferProgress() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/existing.txt", "already here")
            try a.write("Documents/image.raw", "not a text file")
            #expect(await eventually { b.read("Documents/existing.txt") != nil && b.read("Documents/image.raw") != nil })
            let def = MetadataQueryDefinition(scope: .documents, predicate: try QueryPredicate.parse("name LIKE '*.txt' OR size > 1MB"), sort: .name)
            let query = LiveQuery(engine: b.engine, definition: def)
            let log = QueryLog()
            await query.start { n in Task { await log.note(n) } }
            // Gathering: what matches now, nothing else.
            #expect(await eventually { await log.gathered != nil })
            #expect(await log.gathered?.map(\.name) == ["existing.txt"])
            // Three new files written together on A arrive on B as added, batched.
            for n in ["one", "two", "three"] { try a.write("Documents/\(n).txt", "\(n) from A") }
            #expect(await eventually { await Set(log.added.map(\.name)).isSuperset(of: ["one.txt", "two.txt", "three.txt"]) })
            #expect(await log.updates.contains { $0.added.count >= 2 }, "the three files came in fewer batches than changes")
            #expect(await !log.added.contains { $0.name == "image.raw" }, "the predicate filters")
            // A big file: its download progress on B shows as `changed` items.
            var rng = SeededRandom.forTest("livequery")
            try a.write("Documents/big.bin", bytes: rng.bytes(48 << 20))
            #expect(await eventually(timeout: .seconds(60)) { await log.changed.contains { $0.name == "big.bin" && $0.status == .current && $0.percentDownloaded == 100 } })
            let progress = await log.changed.filter { $0.name == "big.bin" && $0.downloading }.map(\.percentDownloaded)
            #expect(!progress.isEmpty, "no downloading state was reported")
            // Delete on A: removed on B.
            try FileManager.default.removeItem(at: a.url("Documents/two.txt"))
            #expect(await eventually { await log.removed.contains { $0.name == "two.txt" } })
            // Paused: nothing is delivered; on resume the change arrives in one batch.
            query.pause()
            let before = await log.count
            try a.write("Documents/four.txt", "four")
            #expect(await eventually { b.read("Documents/four.txt") == "four" })
            try await Task.sleep(for: .milliseconds(300))  // longer than the batch interval: a batch would have come by now
            #expect(await log.count == before, "updates arrived while paused")
            query.resume()
            #expect(await eventually { await log.added.contains { $0.name == "four.txt" } })
            await query.stop()
            #expect(query.results.map(\.name).contains("four.txt"))
        }
    }

    @Test func immediateSchedulerGivesOneUpdatePerChangeOnTheSameDevice() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A")
            let query = LiveQuery(engine: a.engine, definition: MetadataQueryDefinition(), scheduler: ImmediateQueryScheduler())
            let log = QueryLog()
            await query.start { n in Task { await log.note(n) } }
            #expect(await eventually { await log.gathered != nil })
            try a.write("Documents/local.txt", "made here")
            // Listed at once as a local item not yet uploaded, then as uploaded.
            #expect(await eventually { await log.added.contains { $0.name == "local.txt" } })
            #expect(await eventually { await (log.changed + log.added).contains { $0.name == "local.txt" && $0.uploaded } })
            await query.stop()
        }
    }
}
