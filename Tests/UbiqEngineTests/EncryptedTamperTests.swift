import Foundation
import Testing
import UbiqCore
import UbiqEngine
import UbiqTesting

/// #39 §2 "a dishonest server is caught", on a device of an encrypted account whose server
/// lies (`DishonestServer`, between the device's sealing layer and the real server): what it
/// sends is checked on the device, reported as `tampered`, never written into the folder, and
/// the server's own copy is left alone (honest again, the device gets everything).
@Suite("End-to-end encryption: a dishonest server is caught", .serialized)
struct EncryptedTamperTests {
    @Test(arguments: [DishonestServer.Lie.swapChunks, .cutChunks])
    func aChunkThatIsNotTheOneNamedIsNeverWritten(_ lie: DishonestServer.Lie) async throws {
        try await withFleet(backend: .encrypted) { fleet in
            let a = try await fleet.device("A")
            let b = try await fleet.device("B", wrap: { DishonestServer($0) })
            let liar = try #require(b.server as? DishonestServer)
            liar.set(lie)
            var rng = SeededRandom.forTest("e2e.tamper.chunks")
            let one = rng.bytes(300_000), two = rng.bytes(200_000)
            try a.write("Documents/one.bin", bytes: one)
            try a.write("Documents/two.bin", bytes: two)
            let caught = await eventually(timeout: .seconds(30)) { await b.engine.status().errors.contains { $0.code == ErrorCode.tampered.rawValue } }
            let seen = await b.engine.status()
            #expect(caught, "\(seen.errors)")
            #expect(liar.told > 0)
            #expect(!b.exists("Documents/one.bin") && !b.exists("Documents/two.bin"))
            liar.set(.none)
            _ = await b.engine.retry([try RelativePath(validating: "Documents/one.bin"), try RelativePath(validating: "Documents/two.bin")])
            let healed = await eventually(timeout: .seconds(60)) { b.readBytes("Documents/one.bin") == one && b.readBytes("Documents/two.bin") == two }
            let after = await b.engine.status()
            #expect(healed, "\(after.errors)")
        }
    }

    /// A version the server points at another file's content, or sends without its sealed
    /// record: the feed stops there, with the reason; nothing is written.
    @Test(arguments: [DishonestServer.Lie.otherContent, .dropRecords])
    func aVersionThatIsNotWhatItsDeviceCommittedIsCaught(_ lie: DishonestServer.Lie) async throws {
        try await withFleet(backend: .encrypted) { fleet in
            let a = try await fleet.device("A")
            let b = try await fleet.device("B", wrap: { DishonestServer($0) })
            let liar = try #require(b.server as? DishonestServer)
            liar.set(lie)
            try a.write("Documents/one.txt", "the first file")
            try a.write("Documents/two.txt", "the second file, longer")
            let caught = await eventually(timeout: .seconds(30)) {
                let e = await b.engine.status().lastError ?? ""
                return e.contains("another content") || e.contains("without its sealed record")
            }
            let seen = await b.engine.status()
            #expect(caught, "\(seen)")
            #expect(liar.told > 0)
            #expect(!b.exists("Documents/one.txt") && !b.exists("Documents/two.txt"))
            liar.set(.none)
            await b.engine.requestPass()
            #expect(await eventually(timeout: .seconds(30)) { b.read("Documents/one.txt") == "the first file" && b.read("Documents/two.txt") == "the second file, longer" })
        }
    }

    @Test func aNameThatIsNotASealedNameStopsTheFeedAndNothingIsWritten() async throws {
        try await withFleet(backend: .encrypted) { fleet in
            let a = try await fleet.device("A")
            let b = try await fleet.device("B", wrap: { DishonestServer($0) })
            let liar = try #require(b.server as? DishonestServer)
            liar.set(.renameTo("planted.txt"))
            try a.write("Documents/real.txt", "what A wrote")
            let caught = await eventually(timeout: .seconds(30)) { await b.engine.status().lastError?.contains("not a sealed name") == true }
            let seen = await b.engine.status()
            #expect(caught, "\(seen)")
            #expect(liar.told > 0)
            #expect(!b.exists("Documents/planted.txt") && !b.exists("Documents/real.txt"))
            liar.set(.none)
            await b.engine.requestPass()
            #expect(await eventually(timeout: .seconds(30)) { b.read("Documents/real.txt") == "what A wrote" })
            #expect(!b.exists("Documents/planted.txt"))
        }
    }
}
