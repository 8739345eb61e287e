import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqProtocol
import UbiqTesting

/// On-demand content (product §2.5) and delete/trash (§2.8) across real devices.
@Suite("On-demand content, delete and trash", .serialized)
struct OnDemandAndTrashTests {
    func item(_ d: TestDevice, _ p: String) async -> MetadataItem? {
        await d.engine.listing().first { $0.path.string == p }
    }

    func paths(_ ps: String...) -> [RelativePath] { ps.map { try! RelativePath(validating: $0) } }

    /// `p` / `ubiq pin`: a pinned folder on an on-demand device fetches what it holds now and
    /// every file added to it later, listings flag everything in it as pinned, and unpinning
    /// keeps the content but fetches no more.
    @Test(arguments: [Backend.embedded, .encrypted])
    func aPinnedFolderKeepsWhatItHoldsAndWhatComesLater(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
            let a = try await fleet.device("A")
            try a.write("Documents/keep/one.txt", "one")
            try a.write("Documents/other.txt", "other")
            let c = try await fleet.device("C", download: .onDemand)
            #expect(await eventually {
                let one = await item(c, "Documents/keep/one.txt")?.status, other = await item(c, "Documents/other.txt")?.status
                return one == .notDownloaded && other == .notDownloaded
            })
            let r = await c.engine.pin(paths("Documents/keep", "Documents/nothing-here"), true)
            #expect(r.map { $0.error == nil } == [true, false], "\(r)")
            #expect(await eventually { c.read("Documents/keep/one.txt") == "one" }, "what the folder holds is fetched")
            let folderPinned = await item(c, "Documents/keep")?.pinned, filePinned = await item(c, "Documents/keep/one.txt")?.pinned
            #expect(folderPinned == true && filePinned == true)
            let other = await item(c, "Documents/other.txt")
            #expect(other?.pinned == false && !c.exists("Documents/other.txt"), "only the pinned folder: \(String(describing: other))")
            try a.write("Documents/keep/two.txt", "two")
            #expect(await eventually { c.read("Documents/keep/two.txt") == "two" }, "a file added later is fetched too")
            #expect(await item(c, "Documents/keep/two.txt")?.pinned == true)
            // Unpinned: kept as it is, but new files stay in the cloud.
            _ = await c.engine.pin(paths("Documents/keep"), false)
            #expect(await item(c, "Documents/keep/one.txt")?.pinned == false)
            try a.write("Documents/keep/three.txt", "three")
            #expect(await eventually { await item(c, "Documents/keep/three.txt")?.status == .notDownloaded })
            await c.engine.syncNow()
            #expect(c.read("Documents/keep/one.txt") == "one" && !c.exists("Documents/keep/three.txt"))
            // A restart keeps the wish: pinned again, stopped, and a new file still comes.
            _ = await c.engine.pin(paths("Documents/keep"), true)
            try await c.restart()
            try a.write("Documents/keep/four.txt", "four")
            #expect(await eventually { c.read("Documents/keep/four.txt") == "four" })
        }
    }

    /// `X` / `cancelTransfers`: a running download stops (what arrived is kept for later), the
    /// item stays in the cloud, no pass fetches it again, and a later fetch completes it. An
    /// upload is not cancelled alone (the message says to pause instead).
    @Test func aCancelledDownloadStopsAndStaysInTheCloudUntilFetched() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A")
            var rng = SeededRandom.forTest("cancel.download")
            let big = rng.bytes(96 << 20)
            try a.write("Documents/big.bin", bytes: big)
            let c = try await fleet.device("C", download: .onDemand)
            #expect(await eventually(timeout: .seconds(120)) { await item(c, "Documents/big.bin")?.uploaded == true })
            let fetch = Task { await c.engine.download(paths("Documents/big.bin")) }
            #expect(await eventually(poll: .milliseconds(1)) { await item(c, "Documents/big.bin")?.downloading == true }, "the download runs")
            let r = await c.engine.cancelTransfers(paths("Documents/big.bin"))
            #expect(r.allSatisfy { $0.error == nil }, "\(r)")
            let answered = await fetch.value
            #expect(answered.first?.error != nil, "the fetch that was cancelled says it did not complete: \(answered)")
            let status = await item(c, "Documents/big.bin")?.status
            #expect(!c.exists("Documents/big.bin") && status == .notDownloaded)
            await c.engine.syncNow()
            #expect(!c.exists("Documents/big.bin"), "no pass fetches it again")
            let nothing = await c.engine.cancelTransfers(paths("Documents/big.bin"))
            #expect(nothing.first?.error?.contains("nothing is being transferred") == true, "\(nothing)")
            // Fetched on request later: complete and right.
            let again = await c.engine.download(paths("Documents/big.bin"))
            #expect(again.allSatisfy { $0.error == nil }, "\(again)")
            #expect(c.readBytes("Documents/big.bin").map(ContentHash.of) == ContentHash.of(big))
        }
    }

    @Test(arguments: [Backend.embedded, .encrypted])
    func onDemandDeviceListsEverythingAndDownloadsOnlyWhatItIsAskedFor(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
            let a = try await fleet.device("A")
            var rng = SeededRandom.forTest("ondemand")
            let big = rng.bytes(32 << 20)
            try a.write("Documents/big.bin", bytes: big)
            try a.write("Documents/small.txt", "small")
            let c = try await fleet.device("C", download: .onDemand)
            // Metadata for everything, content for nothing.
            #expect(await eventually {
                let big = await item(c, "Documents/big.bin"), small = await item(c, "Documents/small.txt")
                return big?.status == .notDownloaded && small?.status == .notDownloaded
            })
            #expect(!c.exists("Documents/big.bin") && !c.exists("Documents/small.txt"))
            #expect(await item(c, "Documents/big.bin")?.size == big.count)
            #expect(await eventually { await item(c, "Documents/big.bin")?.uploaded == true }, "A finishes uploading")
            // Download: the status passes through `downloading` with progress, then `current`.
            let seen = SeenStates()
            let watcher = Task {
                while !Task.isCancelled {
                    if let i = await item(c, "Documents/big.bin") { await seen.note(i) }
                    try? await Task.sleep(for: .milliseconds(1))
                }
            }
            let r = await c.engine.download(paths("Documents/big.bin"))
            watcher.cancel()
            #expect(r.allSatisfy { $0.error == nil }, "\(r)")
            #expect(c.readBytes("Documents/big.bin").map(ContentHash.of) == ContentHash.of(big))
            #expect(await item(c, "Documents/big.bin")?.status == .current)
            #expect(await seen.sawDownloading, "never saw the item downloading")
            #expect(!c.exists("Documents/small.txt"), "only what was asked for")
            // A new version from A reaches the pinned file on C.
            try a.write("Documents/big.bin", bytes: Array(big.prefix(1 << 20)))
            #expect(await eventually { c.readBytes("Documents/big.bin")?.count == 1 << 20 })
            // Evict: absent from the folder, still listed, not downloaded again; not deleted anywhere.
            let e = await c.engine.evict(paths("Documents/big.bin"))
            #expect(e.allSatisfy { $0.error == nil }, "\(e)")
            #expect(!c.exists("Documents/big.bin"))
            #expect(await item(c, "Documents/big.bin")?.status == .notDownloaded)
            await c.engine.syncNow()
            #expect(a.readBytes("Documents/big.bin")?.count == 1 << 20, "eviction is not a delete")
            #expect(!c.exists("Documents/big.bin"))
        }
    }

    /// Evictions made while a pass is scanning stick: no scan started earlier may put back a file
    /// the eviction removed (a scan that yields to other work mid-walk would).
    @Test func evictionsMadeDuringPassesStick() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), c = try await fleet.device("C")
            // Enough files that a scan takes a few milliseconds.
            for i in 0..<1500 { try a.write("Documents/many/d\(i % 30)/f\(i).txt", "file \(i)") }
            #expect(await eventually(timeout: .seconds(60)) {
                guard c.exists("Documents/many/d29/f1499.txt") else { return false }
                return await c.engine.isIdle()
            })
            for k in 0..<20 {
                let p = "Documents/many/d\(k % 30)/f\(k).txt"
                try c.write("Documents/note-\(k).txt", "a local change, so the pass scans")
                async let pass: Void = c.engine.syncNow()
                async let evicted = c.engine.evict(paths(p))
                let (_, r) = await (pass, evicted)
                #expect(r.allSatisfy { $0.error == nil || $0.error!.contains("changed just now") }, "\(r)")
                guard r.allSatisfy({ $0.error == nil }) else { continue }
                await c.engine.syncNow()
                #expect(!c.exists(p), "round \(k): the evicted file came back")
                #expect(await item(c, p)?.status == .notDownloaded, "round \(k)")
            }
        }
    }

    @Test(arguments: [Backend.embedded, .encrypted])
    func evictionIsRefusedForUnsyncedChangesAndSurvivesOnAnAllDevice(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/doc.txt", "synced")
            #expect(await eventually { b.read("Documents/doc.txt") == "synced" })
            // B edits with its engine stopped: the edit is not on the server yet, so evict refuses.
            await b.stop()
            try b.write("Documents/doc.txt", "edited on B, not uploaded")
            try await b.restart(start: false)
            let refused = await b.engine.evict(paths("Documents/doc.txt"))
            #expect(refused.first?.error?.contains("not uploaded") == true, "\(refused)")
            #expect(b.read("Documents/doc.txt") == "edited on B, not uploaded")
            await b.engine.syncNow()
            #expect(await eventually { a.read("Documents/doc.txt") == "edited on B, not uploaded" })
            // Now it may go; on an `all` device it stays evicted across passes and restarts.
            #expect(await b.engine.evict(paths("Documents/doc.txt")).allSatisfy { $0.error == nil })
            #expect(!b.exists("Documents/doc.txt"))
            try await b.restart()
            await b.engine.syncNow()
            #expect(!b.exists("Documents/doc.txt"))
            #expect(await item(b, "Documents/doc.txt")?.status == .notDownloaded)
            // Writing a new file where the evicted item is listed is a conflict, never an overwrite.
            try b.write("Documents/doc.txt", "new local content on B")
            #expect(await eventually { await item(a, "Documents/doc.txt")?.conflict == true })
            let v = try await a.engine.versions(of: try RelativePath(validating: "Documents/doc.txt"))
            #expect(v.current?.size == "edited on B, not uploaded".utf8.count)
            #expect(v.conflicts.contains { $0.size == "new local content on B".utf8.count })
            #expect(a.read("Documents/doc.txt") == "edited on B, not uploaded")
            // Downloading again brings it back.
            #expect(await eventually { b.read("Documents/doc.txt") == "edited on B, not uploaded" })
        }
    }

    @Test(arguments: [Backend.embedded, .encrypted])
    func removeDeletesEverywhereAndRestoreBringsItBackWithHistory(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/Reports/q1.txt", "q1 v1")
            #expect(await eventually { b.read("Documents/Reports/q1.txt") == "q1 v1" })
            try a.write("Documents/Reports/q1.txt", "q1 v2")
            #expect(await eventually { b.read("Documents/Reports/q1.txt") == "q1 v2" })
            // The download landed; B's engine also settles what it saw of it before the remove.
            _ = await eventually { await b.engine.isIdle() }
            let r = await b.engine.remove(paths("Documents/Reports"))
            #expect(r.allSatisfy { $0.error == nil }, "\(r)")
            #expect(await eventually { !a.exists("Documents/Reports") && !b.exists("Documents/Reports") })
            let trash = try await a.engine.trash()
            #expect(trash.contains { $0.path.string == "Documents/Reports" })
            // Not in the trash: a clear error.
            await #expect(throws: EngineError.self) { try await a.engine.restore(try RelativePath(validating: "Documents/nothing.txt")) }
            _ = try await a.engine.restore(try RelativePath(validating: "Documents/Reports"))
            #expect(await eventually { a.read("Documents/Reports/q1.txt") == "q1 v2" && b.read("Documents/Reports/q1.txt") == "q1 v2" })
            let v = try await b.engine.versions(of: try RelativePath(validating: "Documents/Reports/q1.txt"))
            #expect(v.others.count == 1, "history came back with the item")
            // Removing an item with changes not yet uploaded is refused, and nothing is lost.
            await b.stop()
            try b.write("Documents/Reports/q1.txt", "unsynced edit")
            try await b.restart(start: false)
            let refused = await b.engine.remove(paths("Documents/Reports/q1.txt"))
            #expect(refused.first?.error?.contains("not uploaded") == true)
            #expect(b.read("Documents/Reports/q1.txt") == "unsynced edit")
        }
    }
}

/// What a polling observer saw of one item.
actor SeenStates {
    var sawDownloading = false
    var percents: [Double] = []
    func note(_ i: MetadataItem) {
        if i.downloading { sawDownloading = true; percents.append(i.percentDownloaded) }
    }
}
