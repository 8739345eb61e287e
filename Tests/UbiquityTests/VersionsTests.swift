import Foundation
import Testing
import Ubiquity
import UbiqCore
import UbiqTesting

extension DaemonSuites {
    /// `FileVersion` on conflicts made on purpose across two daemons: resolved by keeping the other
    /// device's version, and by removing the other versions (the current one stays).
    @Suite("File versions through the library", .serialized)
    struct VersionsTests {
        @Test func conflictsAreResolvedByKeepingAVersionOrRemovingTheOthers() async throws {
            try await Daemons.with(["A", "B"]) { try await resolve(on: $0) }
        }

        /// A conflict on `doc`: B writes `fromB` while its daemon is stopped, A writes `fromA`.
        /// Returns once A lists it.
        func conflict(_ d: Daemons, _ docA: URL, _ docB: URL, fromA: String, fromB: String) async throws {
            d.stopDaemon("B")
            try Data(fromA.utf8).write(to: docA)
            let a = d.ubiquity("A")
            let sent = await eventually(timeout: .seconds(30)) { (try? await FileVersion.current(of: docA, ubiquity: a))?.size == fromA.utf8.count }
            #expect(sent, "A's edit reached the server")
            try Data(fromB.utf8).write(to: docB)
            try d.startDaemon("B")
            let listed = await eventually(timeout: .seconds(60)) { ((try? await FileVersion.unresolvedConflicts(of: docA, ubiquity: a)) ?? []).count == 1 }
            #expect(listed, "A lists the conflict")
        }

        func resolve(on d: Daemons) async throws {
            let a = d.ubiquity("A"), b = d.ubiquity("B")
            let docA = d.folder("A").appendingPathComponent("Documents/plan.txt"), docB = d.folder("B").appendingPathComponent("Documents/plan.txt")
            try FileManager.default.createDirectory(at: docA.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("first".utf8).write(to: docA)
            let arrived = await eventually(timeout: .seconds(30)) { (try? String(contentsOf: docB, encoding: .utf8)) == "first" }
            #expect(arrived)
            // A refusal carries the daemon's stable code beside its words (#38 §4).
            let missing = d.folder("A").appendingPathComponent("Documents/no-such.txt")
            let refusal = await #expect(throws: UbiquityError.self) { _ = try await FileVersion.versions(of: missing, ubiquity: a) }
            #expect(refusal?.code == .refused && refusal?.reason == .notFound, "\(String(describing: refusal))")

            // Keep B's version: it becomes the current one on both devices, no conflict left.
            try await conflict(d, docA, docB, fromA: "A's plan", fromB: "B's plan, longer")
            let theirs = try #require(try await FileVersion.unresolvedConflicts(of: docA, ubiquity: a).first)
            #expect(theirs.isConflict && theirs.size == "B's plan, longer".utf8.count && theirs.deviceName == "B")
            #expect(try await theirs.content(ubiquity: a) == Data("B's plan, longer".utf8))
            try await FileVersion.resolve(docA, keeping: theirs, ubiquity: a)
            let kept = await eventually(timeout: .seconds(30)) {
                (try? String(contentsOf: docA, encoding: .utf8)) == "B's plan, longer" && (try? String(contentsOf: docB, encoding: .utf8)) == "B's plan, longer"
            }
            #expect(kept, "B's version on both")
            #expect(try await FileVersion.unresolvedConflicts(of: docA, ubiquity: a).isEmpty)
            let gone = await eventually(timeout: .seconds(30)) { (try? await FileVersion.unresolvedConflicts(of: docB, ubiquity: b))?.isEmpty == true }
            #expect(gone)

            // Remove the other versions: A's (current) stays; the conflict version leaves; the history stays.
            try await conflict(d, docA, docB, fromA: "A again", fromB: "B again")
            let current = try #require(try await FileVersion.current(of: docA, ubiquity: a))
            try await FileVersion.removeOtherVersions(of: docA, ubiquity: a)
            let after = try await FileVersion.versions(of: docA, ubiquity: a)
            #expect(after.unresolvedConflicts.isEmpty && after.current?.id == current.id)
            #expect(!after.others.isEmpty, "earlier versions are kept for restoring")
            let settled = await eventually(timeout: .seconds(30)) {
                let text = try? String(contentsOf: docB, encoding: .utf8)
                let conflicts = try? await FileVersion.unresolvedConflicts(of: docB, ubiquity: b)
                return text == "A again" && conflicts?.isEmpty == true
            }
            #expect(settled, "B has A's version and no conflict")
            try await FileVersion.removeOtherVersions(of: docA, ubiquity: a)  // nothing to remove: nothing happens
            #expect(try await FileVersion.current(of: docA, ubiquity: a)?.id == current.id)
        }
    }
}
