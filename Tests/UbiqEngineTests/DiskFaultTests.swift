import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// A device whose disk fails the engine's changes to its folder (`ENOSPC`, `EIO`: a full or
/// failing disk) while another device changes the shared tree: nothing is lost on either, the
/// failing items are listed in `status`, and once the disk is mended the device catches up by
/// itself (no retry command).
@Suite("A failing disk", .serialized)
struct DiskFaultTests {
    @Test func aDiskThatFailsEveryChangeLosesNothingAndCatchesUpOnceMended() async throws {
        try await withFleet { fleet in
            let disk = FailingDisk(seed: 7, rate: 1.0)
            let a = try await fleet.device("A"), b = try await fleet.device("B", disk: disk)
            try FileManager.default.createDirectory(at: a.url("Documents/p"), withIntermediateDirectories: true)
            try a.write("Documents/p/a.txt", "a1")
            try a.write("Documents/p/b.txt", "b1")
            try a.write("Documents/c.txt", "c1")
            #expect(await converge(a, b), "before the fault: \(describeDiff(a, b))")

            disk.setFailing(true)
            // A renames the folder, edits, deletes and creates; B's disk refuses every change.
            try FileManager.default.moveItem(at: a.url("Documents/p"), to: a.url("Documents/q"))
            try a.write("Documents/c.txt", "c2")
            try FileManager.default.removeItem(at: a.url("Documents/q/b.txt"))
            try FileManager.default.createDirectory(at: a.url("Documents/r"), withIntermediateDirectories: true)
            try a.write("Documents/r/n.txt", "n1")
            // Meanwhile B's user writes a file of their own (reading the disk still works).
            try b.write("Documents/mine.txt", "from B")
            #expect(await eventually { a.read("Documents/mine.txt") == "from B" }, "B's new file went up while its disk failed")
            #expect(await eventually { await b.engine.status().errors.contains { $0.code == "storage_failure" } },
                    "B lists the changes its disk refused")
            // Nothing B had is gone while its disk fails: each file is at its old place or its new one.
            #expect(b.read("Documents/p/a.txt") == "a1" || b.read("Documents/q/a.txt") == "a1")
            #expect(["c1", "c2"].contains(b.read("Documents/c.txt") ?? "-"))
            #expect(disk.failedCount > 0)

            disk.setFailing(false)
            #expect(await converge(a, b, timeout: .seconds(60)), "after the disk was mended: \(describeDiff(a, b))")
            #expect(b.read("Documents/q/a.txt") == "a1" && b.read("Documents/c.txt") == "c2" && b.read("Documents/r/n.txt") == "n1")
            #expect(!b.exists("Documents/p") && !b.exists("Documents/q/b.txt"))
            #expect(await eventually { await b.engine.status().errors.isEmpty }, "no error is left once the disk works")
        }
    }
}

extension DiskFaultTests {
    /// Found by the randomized runs with a failing disk: another device moved a folder away and
    /// made a new one at its old name with a file in it; here the move failed, so the old folder
    /// was still at that name, and the new folder's step took it as its own. Once the move went
    /// through, the new folder looked deleted here and was deleted on the server — with the
    /// file in it. The new folder now waits for the name to be free.
    @Test func aFolderWhoseMoveFailedIsNotTakenForTheNewFolderAtItsName() async throws {
        try await withFleet { fleet in
            let disk = FailingDisk(seed: 11, rate: 1.0)
            let a = try await fleet.device("A"), b = try await fleet.device("B", disk: disk)
            try FileManager.default.createDirectory(at: a.url("Documents/d"), withIntermediateDirectories: true)
            try a.write("Documents/d/a.txt", "a")
            #expect(await converge(a, b), "before the fault: \(describeDiff(a, b))")

            // B's disk refuses to move its folder `d` (and only that).
            disk.setFailing(true) { op, path in op == "rename" && path.hasSuffix("/Documents/d") }
            try FileManager.default.moveItem(at: a.url("Documents/d"), to: a.url("Documents/e"))
            try FileManager.default.createDirectory(at: a.url("Documents/d"), withIntermediateDirectories: true)
            try a.write("Documents/d/f.txt", "f")
            #expect(await eventually { await b.engine.status().errors.contains { $0.code == "storage_failure" } }, "B's move failed")
            #expect(await eventually { b.read("Documents/d/f.txt") == "f" }, "B has the new file while its move fails")

            disk.setFailing(false)
            // The failed move is tried again now, and the passes it leads to run to their end.
            _ = await b.engine.retry([])
            await b.engine.syncNow()
            #expect(await eventually {
                let idleB = await b.engine.isIdle(), idleA = await a.engine.isIdle()
                return idleA && idleB
            })
            #expect(await converge(a, b, timeout: .seconds(60)), "after the disk was mended: \(describeDiff(a, b))")
            #expect(a.read("Documents/d/f.txt") == "f" && a.read("Documents/e/a.txt") == "a")
            let trash = try await b.engine.trash()
            #expect(trash.isEmpty, "nothing was deleted: \(trash.map(\.path.string))")
        }
    }
}
