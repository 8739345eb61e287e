import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// Pausing syncing (`ubiq pause`, `P` in the front end) on a real device beside another.
@Suite("Pause and resume")
struct PauseTests {
    @Test func aPausedDeviceNeitherSendsNorFetchesUntilResumed() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            let service = DeviceService(engine: a.engine, kv: try SettingsReplica(home: a.home, config: a.config))
            try a.write("Documents/before.txt", "both see this")
            #expect(await eventually { b.read("Documents/before.txt") == "both see this" })
            let paused = await service.handle(.pause(on: true))
            #expect(paused.ok && paused.message?.contains("paused") == true)
            let whilePaused = await a.engine.status()
            #expect(whilePaused.paused == true && !whilePaused.idle)
            // B's new file reaches the server but not A; A's new file stays on A.
            try b.write("Documents/from-b.txt", "B wrote this")
            try a.write("Documents/from-a.txt", "A wrote this")
            #expect(await eventually { await b.engine.status().idle })
            let leaked = await ever(within: .seconds(2)) { a.read("Documents/from-b.txt") != nil || b.read("Documents/from-a.txt") != nil }
            #expect(!leaked, "nothing moves while A is paused")
            // `ubiq sync` says so instead of waiting for the user.
            let sync = await service.handle(.sync)
            #expect(!sync.ok && sync.message?.contains("paused") == true, "\(sync.message ?? "")")
            #expect(await a.engine.status().errors.isEmpty, "a pause is nobody's failure")
            // Resumed: both ways at once.
            #expect(await service.handle(.pause(on: false)).ok)
            #expect(await eventually { a.read("Documents/from-b.txt") == "B wrote this" && b.read("Documents/from-a.txt") == "A wrote this" })
            #expect(await a.engine.status().paused == nil)
        }
    }
}

extension PauseTests {
    /// `P` on marked items / `ubiq pause PATH`: only those files' transfers wait — an upload on
    /// one device, a download on the other — while everything else syncs; listed as paused;
    /// resumed, they go.
    @Test func heldFilesWaitWhileTheRestSyncs() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            let service = DeviceService(engine: a.engine, kv: try SettingsReplica(home: a.home, config: a.config))
            for n in ["x", "y", "z"] { try a.write("Documents/\(n).txt", "\(n)1") }
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            // A holds x (its upload waits); B holds z (its download waits).
            let held = await service.handle(.hold(paths: ["Documents/x.txt"], on: true))
            #expect(held.ok && held.results?.first?.error == nil)
            #expect(await b.engine.hold([try RelativePath(validating: "Documents/z.txt")], true).allSatisfy { $0.error == nil })
            #expect(await a.engine.listing().first { $0.path.string == "Documents/x.txt" }?.paused == true)
            for n in ["x", "y", "z"] { try a.write("Documents/\(n).txt", "\(n)2") }
            #expect(await eventually { b.read("Documents/y.txt") == "y2" }, "the rest syncs")
            await a.engine.syncNow(); await b.engine.syncNow()
            #expect(b.read("Documents/x.txt") == "x1" && b.read("Documents/z.txt") == "z1", "the held ones wait: \(describeDiff(a, b))")
            let errorsA = await a.engine.status().errors, errorsB = await b.engine.status().errors
            #expect(errorsA.isEmpty && errorsB.isEmpty, "holding is nobody's failure")
            // Unknown paths are refused; resumed, both go.
            #expect(await service.handle(.hold(paths: ["Documents/none.txt"], on: true)).results?.first?.error?.contains("no item") == true)
            #expect(await service.handle(.hold(paths: ["Documents"], on: false)).ok)
            _ = await b.engine.hold([try RelativePath(validating: "Documents")], false)
            #expect(await eventually { b.read("Documents/x.txt") == "x2" && b.read("Documents/z.txt") == "z2" }, "\(describeDiff(a, b))")
            #expect(await a.engine.listing().contains { $0.paused } == false)
        }
    }
}
