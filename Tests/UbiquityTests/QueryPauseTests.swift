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

extension DaemonSuites {
    /// Pause and resume against real daemons: while paused, a query on B neither notifies nor moves
    /// its results whatever A does; on resume one update carries everything (a file added, one
    /// changed, one removed) and the results are the daemon's listing.
    @Suite("Metadata query pause against a daemon", .serialized)
    struct LiveQueryPauseTests {
        @Test func aPausedQueryHoldsStillAndResumesWithOneUpdate() async throws {
            try await Daemons.with(["A", "B"]) { try await pauseAndResume(on: $0) }
        }

        /// The items a program following `notifications` holds.
        static func told(_ notifications: [MetadataQuery.Notification]) -> [ItemID: MetadataItem] {
            var items: [ItemID: MetadataItem] = [:]
            for n in notifications {
                switch n {
                case .didFinishGathering(let all): items = Dictionary(all.map { ($0.itemID, $0) }, uniquingKeysWith: { $1 })
                case .didUpdate(let added, let changed, let removed):
                    for i in added + changed { items[i.itemID] = i }
                    for i in removed { items[i.itemID] = nil }
                }
            }
            return items
        }

        func pauseAndResume(on d: Daemons) async throws {
            let documentsA = d.folder("A").appendingPathComponent("Documents")
            try FileManager.default.createDirectory(at: documentsA, withIntermediateDirectories: true)
            for name in ["keep", "edit", "drop"] { try Data("\(name) v1".utf8).write(to: documentsA.appendingPathComponent("\(name).txt")) }
            let b = d.ubiquity("B")
            let query = MetadataQuery(predicate: "name LIKE '*.txt'", scope: .documents, interval: .milliseconds(50), ubiquity: b)
            let seen = Collected<MetadataQuery.Notification>()
            let watching = Task { for try await n in query.notifications() { seen.add(n) } }
            defer { watching.cancel() }
            let gathered = await eventually(timeout: .seconds(30)) {
                Set(query.results.map(\.name)) == ["keep.txt", "edit.txt", "drop.txt"] && query.results.allSatisfy { $0.status == .current && !$0.downloading }
            }
            #expect(gathered, "\(query.results.map(\.name))")

            query.pause()
            // Everything given before the pause has reached this program (the stream hands it over
            // asynchronously): what it was told adds up to the results, which now hold still.
            let caughtUp = await eventually(timeout: .seconds(30)) { Self.told(seen.all) == Dictionary(query.results.map { ($0.itemID, $0) }, uniquingKeysWith: { $1 }) }
            #expect(caughtUp)
            let before = query.results, heard = seen.all.count
            try Data("edit v2, longer".utf8).write(to: documentsA.appendingPathComponent("edit.txt"))
            try FileManager.default.removeItem(at: documentsA.appendingPathComponent("drop.txt"))
            try Data("new".utf8).write(to: documentsA.appendingPathComponent("new.txt"))
            // B's daemon has all of it (asked directly, not through the paused query).
            let documentsB = d.folder("B").appendingPathComponent("Documents")
            let onB = await eventually(timeout: .seconds(30)) {
                let new = try? await b.status(of: documentsB.appendingPathComponent("new.txt"))
                let edit = try? await b.status(of: documentsB.appendingPathComponent("edit.txt"))
                let drop = try? await b.status(of: documentsB.appendingPathComponent("drop.txt"))
                return new != nil && edit?.size == 15 && drop == .some(nil)
            }
            #expect(onB, "B's daemon lists A's changes")
            #expect(query.results == before, "results hold still while paused")
            #expect(seen.all.count == heard, "no notification while paused: \(seen.all.dropFirst(heard))")

            // The daemon's query stream has brought all of it (held: the program is told nothing yet).
            let held = await eventually(timeout: .seconds(30)) {
                query.state.withLock { s in
                    s.held.added.values.contains { $0.name == "new.txt" } && s.held.changed.values.contains { $0.name == "edit.txt" && $0.size == 15 }
                        && s.held.removed.values.contains { $0.name == "drop.txt" }
                }
            }
            #expect(held)
            #expect(query.results == before && seen.all.count == heard, "still nothing moved")

            query.resume()
            let resumed = await eventually(timeout: .seconds(10)) { seen.all.count > heard }
            #expect(resumed)
            guard case .didUpdate(let added, let changed, let removed)? = seen.all.dropFirst(heard).first else {
                Issue.record("not an update: \(seen.all.dropFirst(heard))")
                return
            }
            #expect(added.map(\.name) == ["new.txt"], "everything held comes in the first update")
            #expect(changed.map(\.name) == ["edit.txt"] && changed.first?.size == 15, "\(changed)")
            #expect(removed.map(\.name) == ["drop.txt"])
            #expect(Set(query.results.map(\.name)) == ["keep.txt", "edit.txt", "new.txt"])
        }
    }

    /// A query outlives its daemon: B's daemon stops while A adds one document and removes another;
    /// when B's daemon is back the query reports both as one update, and never fails.
    @Suite("Metadata query across a daemon restart", .serialized)
    struct QueryRestartTests {
        @Test func aQueryGoesOnAcrossADaemonRestartAndReportsWhatChangedMeanwhile() async throws {
            try await Daemons.with(["A", "B"]) { try await restart(on: $0) }
        }

        func restart(on d: Daemons) async throws {
            let documentsA = d.folder("A").appendingPathComponent("Documents")
            try FileManager.default.createDirectory(at: documentsA, withIntermediateDirectories: true)
            for name in ["stays", "goes"] { try Data(name.utf8).write(to: documentsA.appendingPathComponent("\(name).txt")) }
            let query = MetadataQuery(predicate: "name LIKE '*.txt'", scope: .documents, interval: .milliseconds(50), ubiquity: d.ubiquity("B"))
            let seen = Collected<MetadataQuery.Notification>(), failed = Collected<String>()
            let watching = Task {
                do { for try await n in query.notifications(retry: .milliseconds(200)) { seen.add(n) } } catch { failed.add("\(error)") }
            }
            defer { watching.cancel() }
            let gathered = await eventually(timeout: .seconds(30)) { Set(query.results.map(\.name)) == ["stays.txt", "goes.txt"] }
            #expect(gathered)
            let caughtUp = await eventually(timeout: .seconds(30)) {
                LiveQueryPauseTests.told(seen.all) == Dictionary(query.results.map { ($0.itemID, $0) }, uniquingKeysWith: { $1 })
            }
            #expect(caughtUp)
            let heard = seen.all.count

            d.stopDaemon("B")
            try FileManager.default.removeItem(at: documentsA.appendingPathComponent("goes.txt"))
            try Data("new".utf8).write(to: documentsA.appendingPathComponent("new.txt"))
            let a = d.ubiquity("A")
            let sent = await eventually(timeout: .seconds(30)) { (try? await a.status(of: documentsA.appendingPathComponent("new.txt")))?.uploaded == true }
            #expect(sent)
            try d.startDaemon("B")

            let updated = await eventually(timeout: .seconds(30)) { Set(query.results.map(\.name)) == ["stays.txt", "new.txt"] }
            #expect(updated, "\(query.results.map(\.name)); \(seen.all.dropFirst(heard))")
            // The program has been handed everything the results hold (handed over asynchronously).
            let handed = await eventually(timeout: .seconds(30)) {
                LiveQueryPauseTests.told(seen.all) == Dictionary(query.results.map { ($0.itemID, $0) }, uniquingKeysWith: { $1 })
            }
            #expect(handed)
            let later = Array(seen.all.dropFirst(heard))
            #expect(!later.contains { if case .didFinishGathering = $0 { true } else { false } }, "the daemon's new gathering is an update to the program")
            var added: [String] = [], removed: [String] = []
            for case .didUpdate(let a, _, let r) in later {
                added += a.map(\.name)
                removed += r.map(\.name)
            }
            #expect(added.contains("new.txt") && removed == ["goes.txt"], "added \(added), removed \(removed)")
            #expect(failed.all.isEmpty, "the query did not fail: \(failed.all)")
            #expect(LiveQueryPauseTests.told(seen.all) == Dictionary(query.results.map { ($0.itemID, $0) }, uniquingKeysWith: { $1 }))
        }
    }
}
