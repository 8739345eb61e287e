import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// Reading only what changed (#42): a pass for another device's change reads nothing of the
/// folder, a local change rereads only the folders it was in — and neither misses a change: a
/// move or removal, an unwatched folder, a user's `sync` or a full read grown old reads it all.
@Suite("Folder scans", .serialized)
struct FolderScansTests {
    func path(_ s: String) -> RelativePath { try! RelativePath(validating: s) }

    @Test func aScanRereadsOnlyChangedFoldersWhileNothingMovedAndTheWatcherSeesAll() {
        let t0 = ContinuousClock.now
        var scans = FolderScans(fullEvery: .seconds(300))
        let changes = (structural: UInt64(4), dirty: Set(["", "Documents/a"]))
        #expect(scans.partial(since: changes, watcherComplete: true, now: t0) == nil, "no walk yet: everything")
        scans.lastFull = t0
        scans.lastWalk = (LocalFiles.Scan(), 4)
        #expect(scans.partial(since: changes, watcherComplete: true, now: t0 + .seconds(1)) == [nil, path("Documents/a")])
        #expect(scans.partial(since: (5, changes.dirty), watcherComplete: true, now: t0 + .seconds(1)) == nil, "something moved or was removed")
        #expect(scans.partial(since: changes, watcherComplete: false, now: t0 + .seconds(1)) == nil, "a folder has no watch")
        #expect(scans.partial(since: changes, watcherComplete: true, now: t0 + .seconds(301)) == nil, "the last full read is too old")
        let many = Set((0...FolderScans.partialLimit).map { "Documents/d\($0)" })
        #expect(scans.partial(since: (4, many), watcherComplete: true, now: t0 + .seconds(1)) == nil, "too many folders changed")
        #expect(scans.partial(since: (4, ["Documents/../x"]), watcherComplete: true, now: t0 + .seconds(1)) == nil, "not a valid path")
    }

    @Test func localChangesAreReadFolderByFolderAndNothingIsMissed() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            for d in 0..<20 { try a.write("Documents/d\(d)/f.txt", "file \(d)") }
            #expect(await eventually { b.read("Documents/d19/f.txt") == "file 19" })
            #expect(await eventually { await a.engine.status().idle })
            let before = await a.engine.scans
            // An edit, a new file, and a new folder tree made faster than its watches appear.
            try a.write("Documents/d3/f.txt", "edited")
            try a.write("Documents/d7/new.txt", "new")
            try a.write("Documents/d9/x/y/z/deep.txt", "deep")
            #expect(await eventually { b.read("Documents/d3/f.txt") == "edited" && b.read("Documents/d7/new.txt") == "new" && b.read("Documents/d9/x/y/z/deep.txt") == "deep" },
                    "\(describeDiff(a, b))")
            let after = await a.engine.scans
            #expect(after.partialWalks > before.partialWalks, "the changed folders alone were read")
            #expect(after.fullWalks == before.fullWalks, "no full walk for changes that moved nothing")
            // (A scan after one that found a file still being written claims the whole folder.)
            #expect(after.newClaims > before.newClaims, "the new file and folders were claimed alone, not with the whole folder")
            // A pass for B's change reads nothing of A's folder.
            let aBefore = await a.engine.scans
            try b.write("Documents/d1/from-b.txt", "from b")
            #expect(await eventually { a.read("Documents/d1/from-b.txt") == "from b" })
            #expect(await eventually { await a.engine.status().idle })
            // B's edit of a file A has is placed on A by exchanging it in (RENAME_EXCHANGE): the
            // file it swaps out is the engine's own move, so A's next local edit still rereads
            // only its folder.
            try b.write("Documents/d4/f.txt", "edited on b")
            #expect(await eventually { a.read("Documents/d4/f.txt") == "edited on b" })
            #expect(await eventually { await a.engine.status().idle })
            try a.write("Documents/d5/f.txt", "edited on a after")
            #expect(await eventually { b.read("Documents/d5/f.txt") == "edited on a after" })
            let aAfter = await a.engine.scans
            #expect(aAfter.fullWalks == aBefore.fullWalks, "another device's change walked the whole folder")
            // A removal reads everything again (a moved folder could be seen twice or not at all).
            try FileManager.default.removeItem(at: a.url("Documents/d2/f.txt"))
            #expect(await eventually { !b.exists("Documents/d2/f.txt") })
            #expect(await a.engine.scans.fullWalks > aAfter.fullWalks)
            #expect(await converge(a, b), "\(describeDiff(a, b))")
        }
    }

    /// A change inotify does not report — a write through a hard link outside the folder — is
    /// found by `sync` (which reads everything) and by the full read when the watcher's word
    /// is older than `fullScanEvery`.
    @Test(arguments: [false, true]) func aChangeTheWatcherCannotSeeIsFoundByAFullRead(bySync: Bool) async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A", fullScanEvery: bySync ? FolderScans.standardFullEvery : .milliseconds(500))
            let b = try await fleet.device("B")
            try a.write("Documents/doc.txt", "one")
            #expect(await eventually { b.read("Documents/doc.txt") == "one" })
            let outside = try TempDirectory("ubiq-outside")
            defer { outside.remove() }
            let link = outside.path + "/doc-link"
            #expect(Glibc.link(a.url("Documents/doc.txt").path, link) == 0)
            #expect(await eventually { await a.engine.status().idle })
            let h = try FileHandle(forWritingTo: URL(fileURLWithPath: link))
            try h.truncate(atOffset: 0)
            try h.write(contentsOf: Data("two, unseen by inotify".utf8))
            try h.close()
            if bySync {
                await a.engine.syncNow()
            } else {
                try await Task.sleep(for: .milliseconds(600))
                try b.write("Documents/poke.txt", "a pass on A for B's change")  // a pass on A, its full read overdue
            }
            #expect(await eventually { b.read("Documents/doc.txt") == "two, unseen by inotify" }, "\(describeDiff(a, b))")
        }
    }

    /// #42: past the watch limit (`max_user_watches`; here the engine's own, 4) the device says
    /// so — how many folders, what it does instead, how to raise the limit — every pass reads
    /// the whole folder, so a change in an unwatched folder is still found; once watches are
    /// free again (folders removed, or the limit raised) it watches everything and says nothing.
    @Test func pastTheWatchLimitNothingIsMissedAndTheDeviceSaysWhy() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A", watchLimit: 4)
            let b = try await fleet.device("B")
            for i in 1...5 {
                try FileManager.default.createDirectory(at: a.url("Documents/f\(i)"), withIntermediateDirectories: true)
                try a.write("Documents/f\(i)/x.txt", "one \(i)")
            }
            #expect(await eventually { (1...5).allSatisfy { b.read("Documents/f\($0)/x.txt") == "one \($0)" } }, "\(describeDiff(a, b))")
            let said = await eventually { await a.engine.status().watch?.contains("out of watches at this device's watch limit (4)") == true }
            let watch = await a.engine.status().watch
            #expect(said, "\(watch ?? "nothing said")")
            #expect(watch?.contains("sudo sysctl fs.inotify.max_user_watches=") == true && watch?.contains("every 30 seconds") == true)
            #expect(await b.engine.status().watch == nil)
            #expect(await eventually { await a.engine.status().idle })
            // Edits in every folder, watched or not: each reaches B (a pass on A reads it all).
            for i in 1...5 { try a.write("Documents/f\(i)/x.txt", "two \(i)") }
            try b.write("Documents/poke.txt", "a pass on A")
            #expect(await eventually { (1...5).allSatisfy { b.read("Documents/f\($0)/x.txt") == "two \($0)" } }, "\(describeDiff(a, b))")
            // Three folders removed: their watches are free, the next pass watches the rest.
            for i in 1...3 { try FileManager.default.removeItem(at: a.url("Documents/f\(i)")) }
            #expect(await eventually { !b.exists("Documents/f1") && !b.exists("Documents/f3") })
            try b.write("Documents/poke.txt", "another pass on A")
            let quiet = await eventually { await a.engine.status().watch == nil }
            let still = await a.engine.status().watch
            #expect(quiet, "\(still ?? "")")
            // Watched again: an edit there arrives with no help.
            try a.write("Documents/f5/x.txt", "three")
            #expect(await eventually { b.read("Documents/f5/x.txt") == "three" })
        }
    }
}
