import CFileSupport
import Foundation
import Testing
import UbiqClient
import UbiqCore
@testable import UbiqEngine
import UbiqProtocol
import UbiqTesting

/// One deterministic test per class of loss the randomized multi-device runs found, each named
/// after what it checks.
@Suite("Multi-device regressions", .serialized)
struct MultiDeviceRegressionTests {
    func mkdirs(_ d: TestDevice, _ ps: String...) throws {
        for p in ps { try FileManager.default.createDirectory(at: d.url(p), withIntermediateDirectories: true) }
    }

    /// A server, device A talking to it through a `LoopbackProxy`, and a look at the server's
    /// live items (listed by another device of the account).
    struct Proxied {
        let server: TestServer, proxy: LoopbackProxy, a: TestDevice, checker: UbiqAPIClient
        func live() async -> [ItemRecord] {
            let page = try? await checker.changes(a.config.container, after: 0)
            return (page?.items ?? []).filter { $0.deletedAt == nil }
        }
        func stop() async { await a.stop(); proxy.stop(); await server.stop() }
    }

    func proxiedDevice() async throws -> Proxied {
        let server = try await TestServer.start()
        try await server.user("alice")
        let proxy = LoopbackProxy(target: server.port)
        try proxy.start()
        let a = try await TestDevice.make(server, user: "alice", name: "A", via: proxy.url)
        let (checker, _) = try await server.device("alice", name: "checker")
        return Proxied(server: server, proxy: proxy, a: a, checker: checker)
    }

    /// A folder moved while the engine was walking the folder (its old place read before the
    /// move, its new place after) was seen twice: the copy at the new place took a new ID, the
    /// item at the old place was then deleted, and files other devices had put in it went to
    /// the trash (the randomized long runs, about one run in eight). Moved between the two
    /// folders' reads here on purpose: the moved folder keeps its ID, nothing is deleted.
    @Test func aFolderMovedWhileTheFolderIsWalkedKeepsItsItemAndContents() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try mkdirs(a, "Documents/a/x", "Documents/b/y")
            try a.write("Documents/a/x/f.txt", "f")
            try a.write("Documents/b/y/g.txt", "g")
            #expect(await eventually { b.read("Documents/a/x/f.txt") == "f" && b.read("Documents/b/y/g.txt") == "g" })
            let x = try #require(await b.engine.itemID(at: try RelativePath(validating: "Documents/a/x")))
            let y = try #require(await b.engine.itemID(at: try RelativePath(validating: "Documents/b/y")))
            // Whichever of a and b the walk reads first, its folder moves into the other, not
            // read yet: the walk meets it at both places.
            final class Moved: @unchecked Sendable { let lock = NSLock(); var done: String? }
            let moved = Moved()
            let root = a.folder.path
            WalkHooks.set(root) { dir in
                guard let d = dir?.string, d == "Documents/a" || d == "Documents/b" else { return }
                moved.lock.withLock {
                    guard moved.done == nil else { return }
                    let (child, other) = d == "Documents/a" ? ("x", "Documents/b") : ("y", "Documents/a")
                    if ubiq_rename_noreplace(root + "/" + d + "/" + child, root + "/" + other + "/" + child) == 0 { moved.done = other + "/" + child }
                }
            }
            defer { WalkHooks.set(root, nil) }
            // A removal, so the pass walks the whole folder (a new file alone rereads only its own).
            try a.write("Documents/poke.tmp", "a pass")
            try FileManager.default.removeItem(at: a.url("Documents/poke.tmp"))
            try a.write("Documents/poke.txt", "a pass")
            #expect(await eventually { moved.lock.withLock { moved.done } != nil })
            let to = try #require(moved.lock.withLock { moved.done })
            let file = to.hasSuffix("/x") ? "f.txt" : "g.txt", content = to.hasSuffix("/x") ? "f" : "g"
            #expect(await eventually { b.read("\(to)/\(file)") == content }, "B has \(describeDiff(a, b))")
            WalkHooks.set(root, nil)
            await a.engine.syncNow(); await b.engine.syncNow()
            #expect(await b.engine.itemID(at: try RelativePath(validating: to)) == (to.hasSuffix("/x") ? x : y), "the moved folder kept its item")
            let trash = try await b.engine.trash()
            #expect(trash.isEmpty, "nothing was deleted: \(trash.map(\.path.string))")
            #expect(a.read("\(to)/\(file)") == content && b.read("Documents/a/x/f.txt") == (to.hasSuffix("/x") ? nil : "f"))
        }
    }

    func mv(_ d: TestDevice, _ from: String, _ to: String) throws {
        guard ubiq_rename_noreplace(d.url(from).path, d.url(to).path) == 0 else {
            throw EngineError(.storageFailure, "mv \(from) \(to): \(String(cString: strerror(errno)))")
        }
    }

    /// Two devices move two folders into each other at once: the server keeps the first move,
    /// both devices converge on it and no file is lost.
    @Test func foldersMovedIntoEachOtherConvergeWithoutLoss() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/d1/one.txt", "one")
            try a.write("Documents/d2/two.txt", "two")
            #expect(await eventually { b.read("Documents/d1/one.txt") == "one" && b.read("Documents/d2/two.txt") == "two" })
            await b.stop()
            try mv(a, "Documents/d2", "Documents/d1/d2")
            #expect(await eventually { (try? await a.engine.versions(of: RelativePath(validating: "Documents/d1/d2/two.txt"))) != nil })
            try mv(b, "Documents/d1", "Documents/d2/d1")
            try await b.restart()
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            #expect(a.read("Documents/d1/d2/two.txt") == "two" && a.read("Documents/d1/one.txt") == "one", "\(a.snapshot().keys.sorted())")
            #expect(await b.engine.status().errors.isEmpty)
        }
    }

    /// A device deletes a folder it last saw empty while another device moved a file into it:
    /// the file (no user deleted it) stays, in its folder, on both devices.
    @Test func folderDeletedWhileAnotherDeviceMovedAFileInKeepsTheFile() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/box/old.txt", "old")
            try a.write("Documents/keep.txt", "keep me")
            #expect(await eventually { b.read("Documents/box/old.txt") == "old" && b.read("Documents/keep.txt") == "keep me" })
            await a.stop()
            try mv(b, "Documents/keep.txt", "Documents/box/keep.txt")
            #expect(await eventually { (try? await b.engine.versions(of: RelativePath(validating: "Documents/box/keep.txt"))) != nil })
            try FileManager.default.removeItem(at: a.url("Documents/box"))
            try await a.restart()
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            #expect(a.read("Documents/box/keep.txt") == "keep me", "\(a.snapshot().keys.sorted())")
            #expect(!a.exists("Documents/box/old.txt"), "what the user deleted stays deleted")
        }
    }

    /// A folder delete planned before another device's new file in it was pulled (the pull came
    /// while the round ran, for downloads) is conditional on what the plan saw: the new file
    /// stays (the randomized run, seed 599995357297775007, lost two files that way).
    @Test func aDeletePlannedBeforeANewFileArrivedKeepsTheFile() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/box/old.txt", "old")
            #expect(await eventually { b.read("Documents/box/old.txt") == "old" })
            #expect(await eventually { await a.engine.status().idle })
            let planned = await a.engine.cursor
            await a.stop()
            try b.write("Documents/box/new.txt", "t1 nobody deleted me")
            #expect(await eventually { (try? await b.engine.versions(of: RelativePath(validating: "Documents/box/new.txt"))) != nil })
            try FileManager.default.removeItem(at: a.url("Documents/box"))
            try await a.restart(start: false)
            // The round's plan saw the tree at `planned`; the pull for downloads moved the cursor on.
            try await a.engine.pullRemote()
            #expect(await a.engine.cursor > planned)
            await a.engine.setPlanCursor(planned)
            guard let box = await a.engine.itemID(at: try RelativePath(validating: "Documents/box")) else {
                Issue.record("no item for the folder")
                return
            }
            _ = await a.engine.run(.deleteRemote(box))
            await a.engine.start()
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            #expect(a.read("Documents/box/new.txt") == "t1 nobody deleted me", "\(a.snapshot().keys.sorted())")
            #expect(!a.exists("Documents/box/old.txt"), "what the user deleted stays deleted")
        }
    }

    /// A device moves a folder out of a folder it then deletes, into a folder another device
    /// deleted meanwhile: the server refuses the move, and the delete of the emptied folder must
    /// not take the moved folder with it (the randomized run, seed 3188877514334503928, lost a
    /// file to the trash that way). What was moved comes back where the user put it.
    @Test func aFolderDeletedAfterItsSubfolderMovedOutKeepsTheSubfolderWhenTheMoveIsRefused() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/F/d/f.txt", "t1 nobody deleted me")
            try a.write("Documents/F/old.txt", "old")
            try mkdirs(a, "Documents/G")
            #expect(await eventually { b.read("Documents/F/d/f.txt") == "t1 nobody deleted me" && b.exists("Documents/G") })
            #expect(await eventually { await a.engine.status().idle })
            await a.stop()
            try FileManager.default.removeItem(at: b.url("Documents/G"))
            #expect(await eventually { await b.engine.itemID(at: try! RelativePath(validating: "Documents/G")) == nil })
            try mv(a, "Documents/F/d", "Documents/G/d")
            try FileManager.default.removeItem(at: a.url("Documents/F"))
            try await a.restart()
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            #expect(a.read("Documents/G/d/f.txt") == "t1 nobody deleted me", "\(a.snapshot().keys.sorted())")
            #expect(await eventually { !a.exists("Documents/F") && !b.exists("Documents/F") }, "what the user deleted stays deleted")
            #expect(await converge(a, b) && b.read("Documents/G/d/f.txt") == "t1 nobody deleted me", "\(describeDiff(a, b))")
        }
    }

    /// A device moves a file into a folder that another device deleted meanwhile: the folder
    /// comes back with that file (no user deleted it), and only with it.
    @Test func aFileMovedIntoAFolderAnotherDeviceDeletedBringsTheFolderBack() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/box/old.txt", "old")
            try a.write("Documents/note.txt", "my note")
            #expect(await eventually { b.read("Documents/box/old.txt") == "old" && b.read("Documents/note.txt") == "my note" })
            await a.stop()
            try FileManager.default.removeItem(at: b.url("Documents/box"))
            #expect(await eventually { (try? await b.engine.trash())?.contains { $0.path.string == "Documents/box" } == true })
            try mv(a, "Documents/note.txt", "Documents/box/note.txt")
            try await a.restart()
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            #expect(b.read("Documents/box/note.txt") == "my note", "\(b.snapshot().keys.sorted())")
            #expect(!b.exists("Documents/box/old.txt") && !a.exists("Documents/box/old.txt"), "what B deleted stays deleted")
        }
    }

    /// A device deletes a folder while another, offline, edits a file in it: the edited file
    /// brings its folder back, and only it — the subfolders nobody touched stay deleted (the
    /// randomized run, seed 2161678854591261823: such a subfolder came back, empty).
    @Test func anEditInAFolderDeletedElsewhereBringsBackOnlyWhatWasEdited() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/box/e.txt", "v1")
            try a.write("Documents/box/sub/s.txt", "untouched")
            try FileManager.default.createDirectory(at: a.url("Documents/box/empty"), withIntermediateDirectories: true)
            #expect(await eventually { b.read("Documents/box/sub/s.txt") == "untouched" && b.exists("Documents/box/empty") && b.read("Documents/box/e.txt") == "v1" })
            #expect(await eventually { await a.engine.status().idle })
            await a.stop()
            try FileManager.default.removeItem(at: b.url("Documents/box"))
            #expect(await eventually { (try? await b.engine.trash())?.contains { $0.path.string == "Documents/box" } == true })
            try a.write("Documents/box/e.txt", "v2, edited while the folder was deleted elsewhere")
            try await a.restart()
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            #expect(b.read("Documents/box/e.txt") == "v2, edited while the folder was deleted elsewhere", "\(b.snapshot().keys.sorted())")
            for dev in [a, b] {
                #expect(!dev.exists("Documents/box/sub/s.txt") && !dev.exists("Documents/box/sub") && !dev.exists("Documents/box/empty"),
                        "what B deleted and nobody touched stays deleted: \(dev.snapshot().keys.sorted())")
            }
        }
    }

    /// The fleet's "came back empty" (session 35's trace): while A is stopped with an edit in
    /// folder `m`, B moves folder `d` into `m`, moves `d`'s subfolder out again, and deletes `m`.
    /// A's edit brings `m` back with what was edited; `d`, which nobody but B touched, stays
    /// deleted — it must not come back empty. `seenMove`: A saw `d` move into `m` before it stopped.
    @Test(arguments: [false, true]) func aFolderMovedIntoADeletedFolderAndEmptiedStaysDeleted(seenMove: Bool) async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/m/a.txt", "v1")
            try a.write("Documents/d/sub/s.txt", "kept")
            #expect(await eventually { b.read("Documents/m/a.txt") == "v1" && b.read("Documents/d/sub/s.txt") == "kept" })
            #expect(await eventually { await a.engine.status().idle })
            if seenMove {
                // A sees `d` move into `m` before it stops.
                try FileManager.default.moveItem(at: b.url("Documents/d"), to: b.url("Documents/m/d"))
                #expect(await eventually { a.read("Documents/m/d/sub/s.txt") == "kept" })
                #expect(await eventually { await a.engine.status().idle })
                await a.stop()
            } else {
                await a.stop()
                try FileManager.default.moveItem(at: b.url("Documents/d"), to: b.url("Documents/m/d"))
            }
            try a.write("Documents/m/a.txt", "v2, edited while stopped")
            await b.engine.syncNow()
            try FileManager.default.moveItem(at: b.url("Documents/m/d/sub"), to: b.url("Documents/sub"))
            await b.engine.syncNow()
            try FileManager.default.removeItem(at: b.url("Documents/m"))
            #expect(await eventually { (try? await b.engine.trash())?.contains { $0.path.string == "Documents/m" } == true })
            try await a.restart()
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            #expect(await eventually { await a.engine.status().idle && b.read("Documents/m/a.txt") == "v2, edited while stopped" })
            for dev in [a, b] {
                #expect(dev.read("Documents/sub/s.txt") == "kept")
                #expect(!dev.exists("Documents/d") && !dev.exists("Documents/m/d"), "d stays deleted: \(dev.snapshot().keys.sorted())")
            }
        }
    }

    /// A device deletes a file another device edited meanwhile: the edit wins, on every device.
    @Test func deleteAgainstAnUnseenEditKeepsTheEdit() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/doc.txt", "v1")
            #expect(await eventually { b.read("Documents/doc.txt") == "v1" })
            await a.stop()
            try b.write("Documents/doc.txt", "v2 from B")
            #expect(await eventually { (try? await b.engine.versions(of: RelativePath(validating: "Documents/doc.txt")))?.current?.size == 9 })
            try FileManager.default.removeItem(at: a.url("Documents/doc.txt"))
            try await a.restart()
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            #expect(a.read("Documents/doc.txt") == "v2 from B")
        }
    }

    /// A device edits a file while another deletes it and makes a new file of the same name:
    /// the edit wins over the delete, but the name is taken, so the edited file comes back as
    /// `name (2)` on every device beside the new one. It retried the taken name for ever
    /// (`'…' is taken [path_exists]`), stuck (a randomized run, seed 591163533148724086).
    @Test func anEditOfAFileDeletedAndRemadeElsewhereComesBackBesideIt() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/doc.txt", "v1")
            #expect(await eventually { b.read("Documents/doc.txt") == "v1" })
            await b.stop()
            try FileManager.default.removeItem(at: a.url("Documents/doc.txt"))
            #expect(await eventually { (try? await a.engine.versions(of: RelativePath(validating: "Documents/doc.txt"))) == nil })
            try a.write("Documents/doc.txt", "new from A")
            #expect(await eventually { (try? await a.engine.versions(of: RelativePath(validating: "Documents/doc.txt")))?.current?.size == 10 })
            try b.write("Documents/doc.txt", "edited on B")
            try await b.restart()
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            #expect(a.read("Documents/doc.txt") == "new from A" && a.read("Documents/doc (2).txt") == "edited on B", "\(a.snapshot().keys.sorted())")
            #expect(await b.engine.status().errors.isEmpty)
        }
    }

    /// A file's permission bits travel with its content: a file private to its owner (0600) on
    /// one device stays private on the others (it arrived 0644, readable by every local user),
    /// a script stays executable. Small files (batched) and a big one (alone) both.
    @Test func permissionsTravelWithContent() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            func create(_ p: String, _ bytes: [UInt8], mode: mode_t) throws {
                try FileManager.default.createDirectory(at: a.url(p).deletingLastPathComponent(), withIntermediateDirectories: true)
                let fd = open(a.url(p).path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
                guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
                defer { close(fd) }
                fchmod(fd, mode)  // whatever the umask
                #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
            }
            func mode(_ d: TestDevice, _ p: String) -> Int? {
                (try? FileManager.default.attributesOfItem(atPath: d.url(p).path)[.posixPermissions] as? Int) ?? nil
            }
            let big = (0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let files: [(String, [UInt8], mode_t)] = [
                ("Documents/p/secret1.txt", Array("one".utf8), 0o600), ("Documents/p/secret2.txt", Array("two".utf8), 0o600),
                ("Documents/p/group.txt", Array("three".utf8), 0o640), ("Documents/p/run.sh", Array("#!/bin/sh\necho hi\n".utf8), 0o755),
                ("Documents/p/plain.txt", Array("plain".utf8), 0o644), ("Documents/p/big.bin", big, 0o600),
            ]
            for (p, bytes, m) in files { try create(p, bytes, mode: m) }
            #expect(await eventually { files.allSatisfy { b.readBytes($0.0) == $0.1 } })
            for (p, _, m) in files { #expect(mode(b, p) == Int(m), "\(p): \(mode(b, p).map { String($0, radix: 8) } ?? "-")") }
            // A new version carries its own bits.
            chmod(a.url("Documents/p/secret1.txt").path, 0o644)
            try a.write("Documents/p/secret1.txt", "one, now public")
            #expect(await eventually { b.read("Documents/p/secret1.txt") == "one, now public" })
            #expect(mode(b, "Documents/p/secret1.txt") == 0o644)
            // The server keeps them with the version.
            let versions = try await b.engine.versions(of: RelativePath(validating: "Documents/p/secret2.txt"))
            #expect(versions.current?.permissions == 0o600)
        }
    }

    /// Two devices rename two files to one name: one keeps it, the other becomes `name (2)`
    /// on every device; both contents stay.
    @Test func renameOntoANameAnotherDeviceTookGetsAVisibleRename() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/x.txt", "from x")
            try a.write("Documents/y.txt", "from y")
            #expect(await eventually { b.read("Documents/x.txt") == "from x" && b.read("Documents/y.txt") == "from y" })
            await b.stop()
            try mv(a, "Documents/x.txt", "Documents/n.txt")
            #expect(await eventually { (try? await a.engine.versions(of: RelativePath(validating: "Documents/n.txt"))) != nil })
            try mv(b, "Documents/y.txt", "Documents/n.txt")
            try await b.restart()
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            let texts = Set([a.read("Documents/n.txt"), a.read("Documents/n (2).txt")])
            #expect(texts == ["from x", "from y"], "\(a.snapshot().keys.sorted())")
            #expect(await b.engine.status().errors.isEmpty)
        }
    }

    /// An editor's atomic save whose temporary file was synced before the rename: the document
    /// keeps its item and takes the new content; the temporary item goes; no `name (2)` copy.
    @Test func anAtomicSaveOverADocumentKeepsTheDocumentsItem() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/doc.txt", "version 1")
            #expect(await eventually { b.read("Documents/doc.txt") == "version 1" })
            let before = await a.engine.listing().first { $0.path.string == "Documents/doc.txt" }?.itemID
            try a.write("Documents/.doc.txt.tmp", "version 2, saved atomically")
            #expect(await eventually { b.read("Documents/.doc.txt.tmp") == "version 2, saved atomically" })
            guard rename(a.url("Documents/.doc.txt.tmp").path, a.url("Documents/doc.txt").path) == 0 else { Issue.record("rename failed"); return }
            #expect(await eventually { b.read("Documents/doc.txt") == "version 2, saved atomically" && !b.exists("Documents/.doc.txt.tmp") },
                    "\(describeDiff(a, b))")
            #expect(await converge(a, b))
            #expect(!a.exists("Documents/doc (2).txt") && !b.exists("Documents/doc (2).txt"))
            let after = await a.engine.listing().first { $0.path.string == "Documents/doc.txt" }?.itemID
            #expect(before != nil && after == before, "the document keeps its item")
        }
    }

    /// ext4 hands a deleted folder's inode to the next new file at once: the file must not take
    /// the folder's item ID (the server would refuse every upload of it for ever).
    @Test func aFileReusingADeletedFoldersInodeGetsItsOwnID() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            var reused = false
            for i in 0..<20 where !reused {
                let dir = "Documents/dir\(i)"
                try mkdirs(a, dir)
                #expect(await eventually { b.exists(dir) })
                let inode = try FileManager.default.attributesOfItem(atPath: a.url(dir).path)[.systemFileNumber] as? UInt64
                try FileManager.default.removeItem(at: a.url(dir))
                try a.write("Documents/file\(i).txt", "content \(i)")
                let now = try FileManager.default.attributesOfItem(atPath: a.url("Documents/file\(i).txt").path)[.systemFileNumber] as? UInt64
                reused = inode == now
                #expect(await eventually { b.read("Documents/file\(i).txt") == "content \(i)" && !b.exists(dir) }, "\(describeDiff(a, b))")
            }
            #expect(await a.engine.status().errors.isEmpty)
            #expect(await converge(a, b))
            if !reused { print("note: the file system never reused an inode in 20 tries") }
        }
    }

    /// The identity of a file mixes its inode number with its birth time.
    @Test func identityChangesWithBirthTime() {
        #expect(LocalFiles.identity(inode: 42, birthNanos: 0) == 42)
        #expect(LocalFiles.identity(inode: 42, birthNanos: 1) != LocalFiles.identity(inode: 42, birthNanos: 2))
        #expect(LocalFiles.identity(inode: 42, birthNanos: 7) != LocalFiles.identity(inode: 43, birthNanos: 7))
    }

    /// A step the server keeps refusing is retried with a growing delay, not in a hot loop, and
    /// `status` lists the item with its code.
    @Test func aRefusedItemBacksOffAndIsListedInStatus() async throws {
        let server = try await TestServer.start()
        try await server.user("tight", quota: 4000)
        let a = try await TestDevice.make(server, user: "tight", name: "A")
        defer { a.remove() }
        var rng = SeededRandom.forTest("backoff")
        try a.write("Documents/big.bin", bytes: rng.bytes(20_000))
        let listed = await eventually(timeout: .seconds(20)) { await a.engine.status().errors.contains { $0.path == "Documents/big.bin" } }
        #expect(listed)
        let first = await a.engine.status().errors.first { $0.path == "Documents/big.bin" }
        #expect(first?.code == ErrorCode.storageFull.rawValue, "\(String(describing: first))")
        try await Task.sleep(for: .seconds(3))
        let later = await a.engine.status().errors.first { $0.path == "Documents/big.bin" }
        #expect((later?.attempts ?? 99) <= 5, "attempts in ~3 s: \(later?.attempts ?? -1)")
        await a.stop()
        await server.stop()
    }

    /// `ubiq retry` / `u` (#24 §2): a failing item waiting out a long retry delay is tried again
    /// at once; with nothing failing there is nothing to retry.
    @Test func retryNowEndsAFailingItemsWait() async throws {
        let server = try await TestServer.start()
        try await server.user("tight", quota: 4000)
        let a = try await TestDevice.make(server, user: "tight", name: "A")
        defer { a.remove() }
        #expect(await a.engine.retry([]) == 0)
        var rng = SeededRandom.forTest("retry-now")
        try a.write("Documents/big.bin", bytes: rng.bytes(20_000))
        func attempts() async -> Int { await a.engine.status().errors.first { $0.path == "Documents/big.bin" }?.attempts ?? 0 }
        // A failure, tried again after 0.5, 1, 2, 4 s… (it waited for the 30 s periodic pass:
        // two tries in 30 s where the delays promise five).
        let reached = await eventually(timeout: .seconds(30)) { await attempts() >= 1 }
        let retried = await eventually(timeout: .seconds(10)) { await attempts() >= 3 }
        let count = await attempts()
        #expect(retried, "tried at its retry times: \(count) tries")
        let errs = await a.engine.status().errors
        #expect(reached, "\(errs)")
        let before = await attempts()
        let path = try RelativePath(validating: "Documents")
        #expect(await a.engine.retry([path]) == 1, "the folder's failing file")
        #expect(await eventually(timeout: .seconds(4)) { await attempts() > before }, "tried again at once")
        #expect(await a.engine.status().errors.first?.code == ErrorCode.storageFull.rawValue, "still refused: still listed")
        await a.stop()
        await server.stop()
    }

    /// A file the user deletes while its upload is cut off half-way (the server's current version
    /// is this device's, unfinished) is deleted on the server too: not waited for for ever, not
    /// left on the other devices (the randomized CI run, seed 7306887523057240239).
    @Test func aFileDeletedWhileItsUploadWasCutOffIsDeletedOnTheServer() async throws {
        let p = try await proxiedDevice()
        let (proxy, a) = (p.proxy, p.a)
        defer { a.remove(); proxy.stop() }
        func item() async -> ItemRecord? { await p.live().first { $0.path.string == "Documents/big.bin" } }
        proxy.limit(up: 256 << 10, down: nil)  // the chunks take ~24 s to go up: the cut comes first
        var rng = SeededRandom.forTest("cut-upload")
        try a.write("Documents/big.bin", bytes: rng.bytes(6 << 20))
        let committed = await eventually(timeout: .seconds(20)) { await item()?.current?.uploaded == false }
        #expect(committed, "the metadata went up first, the content is still on its way")
        proxy.refuse(true)
        proxy.cut()
        let offline = await eventually(timeout: .seconds(10)) { await a.engine.status().state == .offline }
        #expect(offline)
        try FileManager.default.removeItem(at: a.url("Documents/big.bin"))
        proxy.limit(up: nil, down: nil)
        proxy.refuse(false)
        let deleted = await eventually(timeout: .seconds(30)) { await item() == nil }
        let errors = await a.engine.status().errors
        #expect(deleted, "\(errors)")
        let settled = await eventually(timeout: .seconds(10)) { let s = await a.engine.status(); return s.errors.isEmpty && s.idle }
        let status = await a.engine.status()
        #expect(settled, "\(status)")
        await p.stop()
    }

    /// An engine stopped after the server made a new item but before the answer came back gives
    /// the file the same item ID when it starts again (the ID is kept before the commit goes
    /// out): the file moved meanwhile is that item, moved, not a second item beside a stray copy
    /// at the old path.
    @Test func aCommitWhoseAnswerWasLostKeepsItsItemAcrossARestart() async throws {
        let p = try await proxiedDevice()
        let (proxy, a) = (p.proxy, p.a)
        defer { a.remove(); proxy.stop() }
        func files() async -> [ItemRecord] { await p.live().filter { $0.kind == .file } }
        #expect(await eventually { await a.engine.status().idle })
        proxy.holdAnswers(after: "/commit")
        try a.write("Documents/draft.txt", "t1 the only copy")
        let made = await eventually(timeout: .seconds(20)) { await files().contains { $0.path.string == "Documents/draft.txt" } }
        #expect(made, "the commit reached the server")
        let first = await files().first?.id
        proxy.refuse(true)
        proxy.cut()
        await a.stop()
        try mv(a, "Documents/draft.txt", "Documents/final.txt")
        proxy.holdAnswers(false)
        proxy.refuse(false)
        try await a.restart()
        let settled = await eventually(timeout: .seconds(20)) {
            let f = await files()
            return f.map(\.path.string) == ["Documents/final.txt"] && f.first?.current?.uploaded == true
        }
        let listed = await files().map { "\($0.path) \($0.id)" }
        #expect(settled, "server files: \(listed)")
        #expect(await files().first?.id == first, "the same item, moved")
        let status = await a.engine.status()
        #expect(status.errors.isEmpty, "\(status.errors)")
        await p.stop()
    }

    /// A program that opened a document before a download replaced it and writes through that
    /// descriptor afterwards writes to the swapped-out file: that edit goes back into the folder
    /// beside the document (`doc (2).txt`) and to the other devices, never silently dropped.
    @Test func anEditThroughADescriptorOpenedBeforeADownloadIsKept() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/doc.txt", "v1 first")
            #expect(await eventually { b.read("Documents/doc.txt") == "v1 first" })
            let fd = open(a.url("Documents/doc.txt").path, O_WRONLY)
            #expect(fd >= 0)
            defer { close(fd) }
            try b.write("Documents/doc.txt", "v2 from B, longer")
            #expect(await eventually { a.read("Documents/doc.txt") == "v2 from B, longer" }, "the download replaced the file")
            let edit = Array("t9 edited through the old descriptor".utf8)
            #expect(pwrite(fd, edit, edit.count, 0) == edit.count)
            #expect(await eventually(timeout: .seconds(20)) { b.read("Documents/doc (2).txt") == "t9 edited through the old descriptor" },
                    "\(b.snapshot().keys.sorted())")
            #expect(a.read("Documents/doc (2).txt") == "t9 edited through the old descriptor")
            #expect(a.read("Documents/doc.txt") == "v2 from B, longer" && b.read("Documents/doc.txt") == "v2 from B, longer")
            // A file swapped out and left alone is removed once held long enough.
            try b.write("Documents/doc.txt", "v3 from B")
            #expect(await eventually { a.read("Documents/doc.txt") == "v3 from B" })
            let partial = a.home.partialFolder(a.config.container).path
            #expect(await eventually(timeout: .seconds(15)) { (try? FileManager.default.contentsOfDirectory(atPath: partial))?.isEmpty == true },
                    "nothing stays held: \((try? FileManager.default.contentsOfDirectory(atPath: partial)) ?? [])")
            #expect(a.snapshot().keys.filter { $0.contains("doc") }.sorted() == ["Documents/doc (2).txt", "Documents/doc.txt"])
        }
    }

    /// Claims are kept as text in the state database; what cannot be read is skipped.
    @Test func claimsRoundTripThroughTheirText() {
        let a = ItemID(uuid: UUID()), b = ItemID(uuid: UUID())
        #expect(InodeClaims(text: "12:\(a),18446744073709551615:\(b),bad,7:nope,:\(a)").byInode == [12: a, UInt64.max: b])
        #expect(InodeClaims(text: nil).byInode.isEmpty && InodeClaims(text: "").text == nil)
        let back = InodeClaims([12: a, UInt64.max: b])
        #expect(InodeClaims(text: back.text) == back)
    }

    /// Claims last as long as their commits are in flight: a claim goes once its item is
    /// synced (at the next claim) or a scan no longer finds it new.
    @Test func claimsGoWhenTheirItemIsSyncedOrNoLongerNew() {
        let a = ItemID(uuid: UUID()), b = ItemID(uuid: UUID()), c = ItemID(uuid: UUID())
        var claims = InodeClaims()
        let inodes: [ItemID: UInt64] = [a: 1, b: 2, c: 3]
        var synced: Set<ItemID> = [c]
        let isSynced = { (id: ItemID) in synced.contains(id) }
        let first = claims.claim([a, b, c], synced: isSynced, inode: { inodes[$0] })
        #expect(first && claims.byInode == [1: a, 2: b], "a synced item claims nothing")
        let again = claims.claim([a], synced: isSynced, inode: { inodes[$0] })
        #expect(!again, "claiming again changes nothing")
        synced.insert(a)
        let afterSync = claims.claim([], synced: { synced.contains($0) }, inode: { inodes[$0] })
        #expect(afterSync && claims.byInode == [2: b])
        let unchanged = claims.prune(keeping: [2: b, 9: c])
        #expect(!unchanged && claims.byInode == [2: b])
        let gone = claims.prune(keeping: [2: c])
        #expect(gone && claims.byInode.isEmpty, "inode 2 is another item's now")
    }

    /// A held file's name keeps its item and what the file was when it was swapped out.
    @Test func heldFileNamesRoundTrip() throws {
        let id = ItemID(uuid: UUID()), v = VersionID(uuid: UUID())
        let stamp = FileStamp(inode: 7, size: 1234, mtimeNanos: -5_000_000_001, ctimeNanos: 0)
        let name = HeldFiles.name(partial: "\(id)-\(v).partial", stamp: stamp)
        let parsed = try #require(HeldFiles.parse(name))
        #expect(parsed.item == id && parsed.size == 1234 && parsed.mtimeNanos == -5_000_000_001)
        #expect(HeldFiles.parse("\(id)-\(v).partial") == nil && HeldFiles.parse("x.partial.1.2.held") == nil)
    }

    @Test func backoffDoublesUpToItsLongestDelay() {
        #expect(ItemBackoff.delay(afterAttempts: 1) == .milliseconds(500))
        #expect(ItemBackoff.delay(afterAttempts: 2) == .seconds(1))
        #expect(ItemBackoff.delay(afterAttempts: 4) == .seconds(4))
        #expect(ItemBackoff.delay(afterAttempts: 40) == ItemBackoff.longest)
        var b = ItemBackoff()
        let id = ItemID(uuid: UUID()), t0 = ContinuousClock.now
        b.failed(id, code: "x", message: "m", now: t0, wall: Date())
        #expect(b.waiting(id, now: t0) && !b.waiting(id, now: t0 + .seconds(1)))
        b.failed(id, code: "x", message: "m", now: t0, wall: Date())
        #expect(b.entries[id]?.attempts == 2 && b.waiting(id, now: t0 + .milliseconds(900)))
        #expect(b.succeeded(id) && b.entries.isEmpty)
        for _ in 0..<10 { b.failed(id, code: ErrorCode.itemChanged.rawValue, message: "pull first", now: t0, wall: Date()) }
        #expect(b.waiting(id, now: t0 + .seconds(1)) && !b.waiting(id, now: t0 + ItemBackoff.longestForNews), "news waits at most 2 s")
    }
}

extension MultiDeviceRegressionTests {
    /// Found by the randomized runs (seed 8954984906536739340): while A's engine was stopped,
    /// A's user moved a file out of a folder and deleted the folder; meanwhile B moved that
    /// folder elsewhere. A saw the file moved on both sides and took the server's place: it
    /// put the file back into the folder — and its delete of the folder then took the file to
    /// the trash on every device. The server had only moved the folder, not the file: the
    /// user's own move of the file wins.
    @Test func aFileMovedOutOfAFolderThatIsThenDeletedSurvivesTheFoldersMoveElsewhere() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try mkdirs(a, "Documents/p/f", "Documents/q")
            try a.write("Documents/p/f/x.txt", "keep me")
            try a.write("Documents/p/f/y.txt", "goes with the folder")
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            await a.stop()
            // A, offline from its engine: x out of the folder, then the folder deleted.
            try mv(a, "Documents/p/f/x.txt", "Documents/p/x.txt")
            try FileManager.default.removeItem(at: a.url("Documents/p/f"))
            // B moves the folder (with x, as B sees it) elsewhere.
            try mv(b, "Documents/p/f", "Documents/q/g")
            #expect(await eventually { await b.engine.syncNow(); return await b.engine.isIdle() })
            try await a.restart()
            #expect(await eventually { await a.engine.syncNow(); await b.engine.syncNow(); return a.snapshot() == b.snapshot() },
                    "\(describeDiff(a, b))")
            #expect(a.read("Documents/p/x.txt") == "keep me" && b.read("Documents/p/x.txt") == "keep me", "\(describeDiff(a, b))")
            let trash = try await b.engine.trash()
            #expect(!trash.contains { $0.path.string.hasSuffix("x.txt") }, "x.txt is not in the trash: \(trash.map(\.path.string))")
        }
    }
}
