import Foundation
import Testing
@testable import UbiqEngine

/// A download is put in place in one atomic step: whatever the user does to the file in the
/// instant between the engine's check and its rename is kept, never overwritten.
@Suite("Placing downloads")
struct PlacementTests {
    /// A temporary folder with a "partials" and a "Documents" folder.
    final class Folder {
        let root: URL
        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("ubiq-place-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: root.appendingPathComponent("partials"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: root.appendingPathComponent("Documents"), withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(at: root) }

        func write(_ text: String, _ rel: String) throws { try Data(text.utf8).write(to: root.appendingPathComponent(rel)) }
        /// Saves in place: same inode, longer content, a new modification time.
        func append(_ text: String, to rel: String) {
            let h = try! FileHandle(forWritingTo: root.appendingPathComponent(rel))
            try! h.seekToEnd()
            try! h.write(contentsOf: Data(text.utf8))
            try! h.close()
        }
        func read(_ rel: String) -> String? { (try? Data(contentsOf: root.appendingPathComponent(rel))).map { String(decoding: $0, as: UTF8.self) } }
        func exists(_ rel: String) -> Bool { FileManager.default.fileExists(atPath: root.appendingPathComponent(rel).path) }
        func placement(_ name: String, expected: FileStamp?) -> Placement {
            Placement(partial: root.appendingPathComponent("partials/\(name).partial").path, dest: root.appendingPathComponent("Documents/\(name)").path,
                      path: name, expected: expected)
        }
        func stamp(_ rel: String) -> FileStamp? { LocalFiles.stamp(root.appendingPathComponent(rel).path)?.1 }
    }

    /// A destination's folder is cut from its path as Foundation would cut it.
    @Test func theFolderOfADestination() {
        for path in ["/tmp/h/Ubiquity/c/Documents/d0/f1.txt", "/tmp/h/Ubiquity/c/Documents/ä ö/x", "/a", "/a/b", "/tmp/x/.partial"] {
            #expect(String(Placement.parent(path)) == (path as NSString).deletingLastPathComponent, "\(path)")
        }
    }

    @Test func aNewFileGoesInAndReplacesTheExpectedOne() throws {
        let f = try Folder()
        try f.write("downloaded", "partials/new.txt.partial")
        try f.write("old", "Documents/old.txt")
        try f.write("downloaded over old", "partials/old.txt.partial")
        let stamps = try Placement.place([f.placement("new.txt", expected: nil), f.placement("old.txt", expected: f.stamp("Documents/old.txt"))],
                                         watcher: nil, settle: .milliseconds(100))
        #expect(stamps.allSatisfy { $0 != nil })
        #expect(f.read("Documents/new.txt") == "downloaded")
        #expect(f.read("Documents/old.txt") == "downloaded over old")
        #expect(!f.exists("partials/new.txt.partial") && !f.exists("partials/old.txt.partial"))
    }

    @Test func aFileCreatedInTheLastInstantIsKept() throws {
        let f = try Folder()
        try f.write("downloaded", "partials/a.txt.partial")
        let stamps = try Placement.place([f.placement("a.txt", expected: nil)], watcher: nil, settle: .milliseconds(100)) { _ in
            try? f.write("the user's new file", "Documents/a.txt")
        }
        #expect(stamps == [nil])
        #expect(f.read("Documents/a.txt") == "the user's new file")
        #expect(!f.exists("partials/a.txt.partial"))
    }

    @Test func aSaveInTheLastInstantIsKept() throws {
        let f = try Folder()
        try f.write("version 1", "Documents/b.txt")
        let planned = try #require(f.stamp("Documents/b.txt"))
        try f.write("version 2 from the server", "partials/b.txt.partial")
        let stamps = try Placement.place([f.placement("b.txt", expected: planned)], watcher: nil, settle: .milliseconds(100)) { _ in
            f.append(" and the user's edit", to: "Documents/b.txt")
        }
        #expect(stamps == [nil])
        #expect(f.read("Documents/b.txt") == "version 1 and the user's edit")
        #expect(!f.exists("partials/b.txt.partial"))
    }

    @Test func aFileReplacedOrRemovedInTheLastInstantIsKeptAsTheUserLeftIt() throws {
        let f = try Folder()
        try f.write("version 1", "Documents/c.txt")
        try f.write("version 1", "Documents/d.txt")
        let c = try #require(f.stamp("Documents/c.txt")), d = try #require(f.stamp("Documents/d.txt"))
        try f.write("from the server", "partials/c.txt.partial")
        try f.write("from the server", "partials/d.txt.partial")
        let stamps = try Placement.place([f.placement("c.txt", expected: c), f.placement("d.txt", expected: d)],
                                         watcher: nil, settle: .milliseconds(100)) { p in
            if p.path == "c.txt" {
                // An editor's atomic save: a new file renamed over the old one.
                try? f.write("saved atomically", "Documents/c.txt.tmp")
                _ = rename(f.root.appendingPathComponent("Documents/c.txt.tmp").path, p.dest)
            } else {
                unlink(p.dest)
            }
        }
        #expect(stamps == [nil, nil])
        #expect(f.read("Documents/c.txt") == "saved atomically")
        #expect(!f.exists("Documents/d.txt"))
        #expect(!f.exists("partials/c.txt.partial") && !f.exists("partials/d.txt.partial"))
    }

    @Test func aRemovalTakesOnlyThePlannedFile() throws {
        let f = try Folder()
        try f.write("synced content", "Documents/gone.txt")
        try f.write("synced content", "Documents/edited.txt")
        let gone = try #require(f.stamp("Documents/gone.txt")), edited = try #require(f.stamp("Documents/edited.txt"))
        let aside = f.root.appendingPathComponent("partials").path
        #expect(try LocalRemoval.remove(f.root.appendingPathComponent("Documents/gone.txt").path, expected: gone, aside: aside))
        #expect(!f.exists("Documents/gone.txt"))
        // Edited in the instant between the check and the removal: put back, not removed.
        let removed = try LocalRemoval.remove(f.root.appendingPathComponent("Documents/edited.txt").path, expected: edited, aside: aside) {
            f.append(", then edited", to: "Documents/edited.txt")
        }
        #expect(!removed)
        #expect(f.read("Documents/edited.txt") == "synced content, then edited")
        #expect(try FileManager.default.contentsOfDirectory(atPath: aside).isEmpty)
    }
}
