import Foundation
import Testing
import UbiqClient
import UbiqCore
@testable import UbiqEngine
import UbiqProtocol
import UbiqTesting

/// Versions and conflicts across real devices (product §3): every case of §3.4, seen on both
/// devices, resolved from either side, history restored.
@Suite("Versions and conflicts", .serialized)
struct ConflictTests {
    let notes = try! RelativePath(validating: "Documents/notes.txt")

    func item(_ d: TestDevice, _ p: String) async -> MetadataItem? {
        await d.engine.listing().first { $0.path.string == p }
    }

    func conflicted(_ ds: [TestDevice], _ p: String) async -> [Bool?] {
        var out: [Bool?] = []
        for d in ds { out.append(await item(d, p)?.conflict) }
        return out
    }

    /// A and B share `Documents/notes.txt`; B then goes offline (engine stopped) while A edits.
    func diverged(_ fleet: Fleet, a aText: String, b bText: String) async throws -> (TestDevice, TestDevice) {
        let a = try await fleet.device("A"), b = try await fleet.device("B")
        try a.write(notes.string, "base")
        #expect(await eventually { b.read(notes.string) == "base" })
        await b.stop()
        try a.write(notes.string, aText)
        #expect(await eventually { (try? await a.engine.versions(of: notes))?.current?.size == aText.utf8.count })
        try b.write(notes.string, bText)
        try await b.restart()
        return (a, b)
    }

    @Test(arguments: [Backend.embedded, .encrypted])
    func conflictSeenOnBothDevicesResolvedFromEitherSideAndHistoryRestored(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
            let (a, b) = try await diverged(fleet, a: "written on A", b: "written on B")
            // Both devices list the item as conflicted; the file holds the current (A's) version.
            #expect(await eventually { await conflicted([a, b], notes.string) == [true, true] })
            #expect(await eventually { b.read(notes.string) == "written on A" })
            let counts = [await a.engine.status().conflicts, await b.engine.status().conflicts]
            #expect(counts == [1, 1])
            let v = try await b.engine.versions(of: notes)
            #expect(v.current?.deviceName == "A" && v.conflicts.count == 1 && v.conflicts[0].deviceName == "B")
            #expect(v.conflicts[0].size == "written on B".utf8.count && v.others.contains { $0.size == 4 })
            // Keep B's version, from A: every device converges on it; A's becomes history.
            let kept = try await a.engine.resolve(notes, keep: v.conflicts[0].id)
            #expect(kept.conflictCount == 0)
            #expect(await eventually { a.read(notes.string) == "written on B" && b.read(notes.string) == "written on B" })
            #expect(await eventually { await conflicted([a, b], notes.string) == [false, false] })
            let after = try await b.engine.versions(of: notes)
            #expect(after.current?.id == v.conflicts[0].id && after.conflicts.isEmpty)
            #expect(after.others.contains { $0.id == v.current?.id }, "the losing version stays in history")
            // Restore the original "base" version from history, from B.
            guard let base = after.others.first(where: { $0.size == 4 }) else { Issue.record("no base version in history"); return }
            _ = try await b.engine.resolve(notes, keep: base.id)
            #expect(await eventually { a.read(notes.string) == "base" && b.read(notes.string) == "base" })
        }
    }

    /// #24 §2 keep both: the current version stays the document and the conflict version
    /// becomes a document of its own beside it, on every device; the conflict is gone.
    @Test(arguments: [Backend.embedded, .encrypted])
    func keepBothPutsTheConflictVersionBesideTheDocument(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
            let (a, b) = try await diverged(fleet, a: "written on A", b: "written on B")
            #expect(await eventually { await conflicted([a, b], notes.string) == [true, true] })
            // Metadata comes first: the conflict version is listed before B's upload finishes
            // (keep-both says "try again" until then).
            #expect(await eventually { (try? await b.engine.versions(of: notes).conflicts.allSatisfy(\.uploaded)) == true })
            let v = try await b.engine.versions(of: notes)
            let made = try await b.engine.keepBoth(notes)
            let copy = notes.parent.map { $0.string + "/" } ?? ""
            let expected = copy + KeepBoth.name(for: notes, device: "B", modified: v.conflicts[0].modified)
            #expect(made.map(\.string) == [expected])
            #expect(expected.contains("(conflict from B "), "\(expected)")
            #expect(await eventually {
                a.read(notes.string) == "written on A" && b.read(notes.string) == "written on A"
                    && a.read(expected) == "written on B" && b.read(expected) == "written on B"
            }, "\(describeDiff(a, b))")
            #expect(await eventually { await conflicted([a, b], notes.string) == [false, false] })
            let after = try await a.engine.versions(of: notes)
            #expect(after.conflicts.isEmpty && after.others.contains { $0.id == v.conflicts[0].id }, "the conflict version stays in history too")
            // Nothing to keep beside it now: a clear error.
            await #expect(throws: EngineError.self) { _ = try await a.engine.keepBoth(notes) }
        }
    }

    @Test(arguments: [Backend.embedded, .encrypted])
    func samePathOnTwoDevicesIsOneItemWithAConflictUnlessIdentical(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            await a.stop(); await b.stop()
            try a.write("Documents/plan.txt", "A's plan")
            try b.write("Documents/plan.txt", "B's plan")
            try a.write("Documents/same.txt", "identical")
            try b.write("Documents/same.txt", "identical")
            try await a.restart(); try await b.restart()
            #expect(await eventually { await conflicted([a, b], "Documents/plan.txt") == [true, true] })
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            let p = try RelativePath(validating: "Documents/plan.txt")
            let v = try await a.engine.versions(of: p)
            #expect(Set([v.current?.size] + v.conflicts.map(\.size)) == Set(["A's plan".utf8.count, "B's plan".utf8.count]))
            let listed = await a.engine.listing().filter { $0.path.string.hasPrefix("Documents/plan") || $0.path.string.hasPrefix("Documents/same") }
            #expect(listed.count == 2, "one item per path: \(listed.map(\.path))")
            #expect(await item(a, "Documents/same.txt")?.conflict == false)
        }
    }

    @Test(arguments: [Backend.embedded, .encrypted])
    func editAgainstDeleteRevivesAndRenameAgainstEditAppliesBoth(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/keep.txt", "v1")
            try a.write("Documents/move.txt", "v1")
            #expect(await eventually { b.read("Documents/keep.txt") == "v1" && b.read("Documents/move.txt") == "v1" })
            await b.stop()
            try FileManager.default.removeItem(at: a.url("Documents/keep.txt"))
            try FileManager.default.moveItem(at: a.url("Documents/move.txt"), to: a.url("Documents/moved.txt"))
            let obs = fleet.view(a)
            #expect(await eventually {
                let items = (try? await obs.changes(a.config.container, after: 0, limit: 1000).items) ?? []
                return items.contains { $0.path.string == "Documents/keep.txt" && $0.isDeleted } && items.contains { $0.path.string == "Documents/moved.txt" }
            })
            try b.write("Documents/keep.txt", "v2 from B")
            try b.write("Documents/move.txt", "v2 from B")
            try await b.restart()
            // The edit wins over the delete and comes back on A; the rename and the edit both apply.
            #expect(await eventually { a.read("Documents/keep.txt") == "v2 from B" && a.read("Documents/moved.txt") == "v2 from B" })
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            #expect(!b.exists("Documents/move.txt"))
            #expect(await a.engine.status().conflicts == 0)
        }
    }
}
