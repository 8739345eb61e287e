import Foundation
import Testing
import Ubiquity
import UbiqCore
import UbiqTesting

extension DaemonSuites {
    /// File coordination across two devices with daemons: a program writing under coordination is
    /// never synced half-written; a program reading under coordination never has its file replaced.
    @Suite("File coordination", .serialized)
    struct CoordinationTests {
        @Test func aCoordinatedWriteOf200MBWithLongPausesIsNeverUploadedHalfWritten() async throws {
            let d = try await Daemons.start(["A", "B"])
            let a = d.ubiquity("A"), b = d.ubiquity("B")
            let url = d.folder("A").appendingPathComponent("Documents/export.bin")
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            // B watches the document: every size it is ever listed with.
            let seen = Collected<Int>()
            let query = MetadataQuery(predicate: "name == 'export.bin'", ubiquity: b)
            let watching = Task {
                for try await n in query.notifications() {
                    switch n {
                    case .didFinishGathering(let items): items.forEach { seen.add($0.size) }
                    case .didUpdate(let added, let changed, _): (added + changed).forEach { seen.add($0.size) }
                    }
                }
            }
            var rng = SeededRandom.forTest("coordination.write")
            let piece = rng.bytes(25 << 20)
            let pieces = 8
            let total = pieces * piece.count
            try await FileCoordinator(ubiquity: a).coordinate(writingItemAt: url) { url in
                _ = FileManager.default.createFile(atPath: url.path, contents: nil)
                let h = try FileHandle(forWritingTo: url)
                for i in 0..<pieces {
                    var p = piece
                    withUnsafeBytes(of: UInt64(i).bigEndian) { for (j, byte) in $0.enumerated() { p[j] = byte } }
                    try h.write(contentsOf: p)
                    try h.synchronize()
                    // Longer than the daemon's settle time (2 s): without coordination the engine
                    // would take the file as finished here.
                    if i % 2 == 1 && i < pieces - 1 { try await Task.sleep(for: .milliseconds(2600)) }
                }
                try h.close()
            }
            let bURL = d.folder("B").appendingPathComponent("Documents/export.bin")
            let whole = await eventually(timeout: .seconds(180)) {
                let status = (try? await b.status(of: bURL))?.status
                return status == .current && (try? FileManager.default.attributesOfItem(atPath: bURL.path)[.size] as? Int) == total
            }
            #expect(whole, "B has \(String(describing: try? FileManager.default.attributesOfItem(atPath: bURL.path)[.size]))")
            #expect(FileManager.default.contentsEqual(atPath: url.path, andPath: bURL.path), "B's copy is A's file byte for byte")
            let versions = try await FileVersion.versions(of: url, ubiquity: a)
            #expect(versions.current?.size == total)
            #expect(versions.others.allSatisfy { $0.size == total } && versions.unresolvedConflicts.isEmpty,
                    "no half-written version ever reached the server: \(versions.others.map(\.size))")
            #expect(!seen.all.isEmpty && seen.all.allSatisfy { $0 == total }, "B only ever listed the whole file: \(seen.all)")
            watching.cancel()
            await d.stop()
        }

        @Test func aCoordinatedReaderKeepsItsFileUntilItLetsGo() async throws {
            let d = try await Daemons.start(["A", "B"])
            let b = d.ubiquity("B")
            let aURL = d.folder("A").appendingPathComponent("Documents/read.txt")
            let bURL = d.folder("B").appendingPathComponent("Documents/read.txt")
            try FileManager.default.createDirectory(at: aURL.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("version one".utf8).write(to: aURL)
            #expect(await eventually { (try? String(contentsOf: bURL, encoding: .utf8)) == "version one" })

            try await FileCoordinator(ubiquity: b).coordinate(readingItemAt: bURL) { url in
                try Data("version two, longer".utf8).write(to: aURL)
                // B's engine learns of the new version (listed as an older local copy)…
                #expect(await eventually(timeout: .seconds(30)) { (try? await b.status(of: url))?.status == .downloaded })
                // …and leaves the file alone while it is read.
                for _ in 0..<10 {
                    #expect(try String(contentsOf: url, encoding: .utf8) == "version one")
                    try await Task.sleep(for: .milliseconds(250))
                }
            }
            #expect(await eventually(timeout: .seconds(30)) { (try? String(contentsOf: bURL, encoding: .utf8)) == "version two, longer" },
                    "the download landed once the reader let go")
            await d.stop()
        }

        @Test func aPresenterOnBIsToldOfAsEditMoveAndDelete() async throws {
            let d = try await Daemons.start(["A", "B"])
            let aURL = d.folder("A").appendingPathComponent("Documents/open.txt")
            let bURL = d.folder("B").appendingPathComponent("Documents/open.txt")
            try FileManager.default.createDirectory(at: aURL.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("first".utf8).write(to: aURL)
            #expect(await eventually { (try? String(contentsOf: bURL, encoding: .utf8)) == "first" })
            #expect(await eventually { (try? await d.ubiquity("B").status(of: bURL)) != nil })

            let events = Collected<FilePresenter.Event>()
            let ready = Collected<Bool>()
            let presenting = Task { for try await e in FilePresenter(bURL, ubiquity: d.ubiquity("B")).events(ready: { ready.add(true) }) { events.add(e) } }
            #expect(await eventually { !ready.all.isEmpty }, "the presenter follows the document before A acts")
            try Data("second, edited on A".utf8).write(to: aURL)
            #expect(await eventually(timeout: .seconds(30)) { events.all.contains(.changed) }, "\(events.all)")
            let renamed = d.folder("A").appendingPathComponent("Documents/renamed.txt")
            try FileManager.default.moveItem(at: aURL, to: renamed)
            let movedTo = d.folder("B").appendingPathComponent("Documents/renamed.txt")
            #expect(await eventually(timeout: .seconds(30)) { events.all.contains(.moved(to: movedTo)) }, "\(events.all)")
            try FileManager.default.removeItem(at: renamed)
            #expect(await eventually(timeout: .seconds(30)) { events.all.last == .deleted }, "\(events.all)")
            presenting.cancel()
            await d.stop()
        }

        /// The presenter outlives B's daemon: A edits and renames the document while B's
        /// daemon is stopped; once it is back the presenter tells both, and goes on following.
        @Test func aPresenterGoesOnAcrossADaemonRestart() async throws {
            try await Daemons.with(["A", "B"]) { try await presenterAcrossRestart(on: $0) }
        }

        func presenterAcrossRestart(on d: Daemons) async throws {
            let aURL = d.folder("A").appendingPathComponent("Documents/open.txt")
            let bURL = d.folder("B").appendingPathComponent("Documents/open.txt")
            try FileManager.default.createDirectory(at: aURL.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("first".utf8).write(to: aURL)
            let there = await eventually { (try? await d.ubiquity("B").status(of: bURL))?.status == .current }
            #expect(there)
            let events = Collected<FilePresenter.Event>(), ready = Collected<Bool>(), failed = Collected<String>()
            let presenting = Task {
                do {
                    for try await e in FilePresenter(bURL, ubiquity: d.ubiquity("B")).events(ready: { ready.add(true) }, retry: .milliseconds(200)) { events.add(e) }
                } catch { failed.add("\(error)") }
            }
            defer { presenting.cancel() }
            let following = await eventually { !ready.all.isEmpty }
            #expect(following)

            d.stopDaemon("B")
            try Data("second, longer, edited on A".utf8).write(to: aURL)
            let renamed = d.folder("A").appendingPathComponent("Documents/renamed.txt")
            try FileManager.default.moveItem(at: aURL, to: renamed)
            let sent = await eventually(timeout: .seconds(30)) { (try? await d.ubiquity("A").status(of: renamed))?.uploaded == true }
            #expect(sent)
            try d.startDaemon("B")
            let movedTo = d.folder("B").appendingPathComponent("Documents/renamed.txt")
            let told = await eventually(timeout: .seconds(30)) { events.all.contains(.moved(to: movedTo)) && events.all.contains(.changed) }
            #expect(told, "\(events.all)")
            #expect(failed.all.isEmpty, "\(failed.all)")
            // Still following: a delete on A ends it.
            try FileManager.default.removeItem(at: renamed)
            let deleted = await eventually(timeout: .seconds(30)) { events.all.last == .deleted }
            #expect(deleted, "\(events.all)")
        }

        @Test func aPresenterIsToldWhenItsDocumentGainsAConflict() async throws {
            let d = try await Daemons.start(["A", "B"])
            let aURL = d.folder("A").appendingPathComponent("Documents/shared.txt")
            let bURL = d.folder("B").appendingPathComponent("Documents/shared.txt")
            try FileManager.default.createDirectory(at: aURL.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("start".utf8).write(to: aURL)
            #expect(await eventually { (try? String(contentsOf: bURL, encoding: .utf8)) == "start" })
            #expect(await eventually { (try? await d.ubiquity("A").status(of: aURL))?.uploaded == true })
            let events = Collected<FilePresenter.Event>(), ready = Collected<Bool>()
            let presenting = Task { for try await e in FilePresenter(aURL, ubiquity: d.ubiquity("A")).events(ready: { ready.add(true) }) { events.add(e) } }
            #expect(await eventually { !ready.all.isEmpty })
            // B edits while its daemon is stopped; A edits meanwhile: B's edit becomes a conflict.
            d.stopDaemon("B")
            try Data("A's edit".utf8).write(to: aURL)
            #expect(await eventually { events.all.contains(.changed) }, "\(events.all)")
            #expect(await eventually { (try? await d.ubiquity("A").status(of: aURL))?.uploaded == true })
            try Data("B's edit".utf8).write(to: bURL)
            try d.startDaemon("B")
            #expect(await eventually(timeout: .seconds(60)) { events.all.contains(.gainedConflict) }, "\(events.all)")
            #expect(try await FileVersion.unresolvedConflicts(of: aURL, ubiquity: d.ubiquity("A")).count == 1)
            presenting.cancel()
            await d.stop()
        }
    }
}
