import Foundation
import Testing
@testable import Ubiquity
import UbiqTesting
#if canImport(Glibc)
import Glibc
#endif

/// `setUbiquitous`'s move never replaces what is at the destination, even what appears there
/// after its check (a download landing at that path).
@Suite("Moving into and out of a container")
struct LocalMoveTests {
    @Test func theRenameNeverReplacesWhatIsThere() throws {
        let dir = try TempDirectory("local-move")
        defer { dir.remove() }
        let a = dir.url.appendingPathComponent("a.txt"), b = dir.url.appendingPathComponent("b.txt")
        try Data("mine".utf8).write(to: a)
        try Data("arrived meanwhile".utf8).write(to: b)
        #expect(LocalMove.renameNoReplace(a.path, b.path) == EEXIST)
        #expect(try String(contentsOf: a, encoding: .utf8) == "mine")
        #expect(try String(contentsOf: b, encoding: .utf8) == "arrived meanwhile")
        #expect(throws: UbiquityError.self) { try LocalMove.move(a, to: b) }
        #expect(try String(contentsOf: b, encoding: .utf8) == "arrived meanwhile", "nothing lost either way")

        let c = dir.url.appendingPathComponent("deeper/c.txt")
        try LocalMove.move(a, to: c)
        #expect(try String(contentsOf: c, encoding: .utf8) == "mine")
        #expect(!FileManager.default.fileExists(atPath: a.path))
    }

    /// From another file system (tmpfs): copied, flushed, then the original removed; nothing
    /// half-copied left behind.
    @Test(.enabled(if: FileManager.default.isWritableFile(atPath: "/dev/shm"))) func acrossFileSystemsAFolderIsCopiedWhole() throws {
        let dir = try TempDirectory("local-move-dest")
        defer { dir.remove() }
        let source = URL(fileURLWithPath: "/dev/shm/ubiq-move-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: source) }
        try FileManager.default.createDirectory(at: source.appendingPathComponent("inner"), withIntermediateDirectories: true)
        let big = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try big.write(to: source.appendingPathComponent("inner/big.bin"))
        try Data("note".utf8).write(to: source.appendingPathComponent("note.txt"))
        var here = stat(), there = stat()
        #expect(stat(dir.url.path, &here) == 0 && stat(source.path, &there) == 0)
        guard here.st_dev != there.st_dev else { return }  // one file system after all: nothing to show

        let dest = dir.url.appendingPathComponent("Documents/moved")
        try LocalMove.move(source, to: dest)
        #expect(try Data(contentsOf: dest.appendingPathComponent("inner/big.bin")) == big)
        #expect(try String(contentsOf: dest.appendingPathComponent("note.txt"), encoding: .utf8) == "note")
        #expect(!FileManager.default.fileExists(atPath: source.path), "the original is gone once the copy is whole")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dest.deletingLastPathComponent().path)
        #expect(leftovers == ["moved"], "no staging copy left: \(leftovers)")
    }
}
