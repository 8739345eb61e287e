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
            let service = DeviceService(engine: a.engine, kv: try KeyValueStore(home: a.home, config: a.config))
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
            let leaked = await eventually(timeout: .seconds(2)) { a.read("Documents/from-b.txt") != nil || b.read("Documents/from-a.txt") != nil }
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
