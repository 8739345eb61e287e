import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqProtocol
import UbiqTesting

/// What the local disk can hold that the engine must not trust (#23): symbolic links inside the
/// synced folder are never followed and never taken for a deletion.
@Suite("Hostile local files", .serialized)
struct LocalHostileTests {
    /// Paths of the account's live items on the server.
    func serverPaths(_ fleet: Fleet, _ d: TestDevice) async throws -> Set<String> {
        let client = UbiqAPIClient(baseURL: fleet.server.baseURL, token: d.config.token)
        return Set(try await client.changes(d.config.container, after: 0).items.filter { $0.deletedAt == nil }.map(\.path.string))
    }

    /// #23 row 6: a device's configuration and state (its token, setting values, every path)
    /// were readable by every local user. Their folders are 0700 now.
    @Test func aDevicesConfigurationAndStateAreItsUsersAlone() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A")
            let kv = try SettingsReplica(home: a.home, config: a.config)
            try await kv.set(.string("secret"), forKey: "k")
            func mode(_ url: URL) -> Int { ((try? FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions]) as? Int) ?? -1 }
            #expect(mode(a.home.stateDirectory) == 0o700, "state \(String(mode(a.home.stateDirectory), radix: 8))")
            #expect(mode(a.home.configDirectory) == 0o700, "config \(String(mode(a.home.configDirectory), radix: 8))")
            // A folder made 0755 by hand is made private again when the engine starts.
            chmod(a.home.stateDirectory.path, 0o755)
            try await a.restart()
            #expect(mode(a.home.stateDirectory) == 0o700)
        }
    }

    /// #23 row 5: with `link -> /elsewhere` in B's folder, another device's `link/x.txt` was
    /// written outside the folder, and B's next scan (which does not follow links) deleted the
    /// items on the server. Now the download is refused with an error B shows, nothing is
    /// written outside, and nothing is deleted.
    @Test func aSymbolicLinkInTheFolderIsNeverFollowedNorTakenForADeletion() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            let outside = try TempDirectory("ubiq-outside")
            defer { outside.remove() }
            // B: a link where A is about to make a folder.
            try FileManager.default.createSymbolicLink(atPath: b.url("Documents/link").path, withDestinationPath: outside.url.path)
            try FileManager.default.createDirectory(at: a.url("Documents/link"), withIntermediateDirectories: true)
            try a.write("Documents/link/x.txt", "from A")
            try a.write("Documents/plain.txt", "plain")
            #expect(await eventually { b.read("Documents/plain.txt") == "plain" })
            let shown = await eventually {
                await b.engine.status().errors.contains { $0.path == "Documents/link/x.txt" && $0.message.contains("symbolic link") }
            }
            let errors = await b.engine.status().errors
            #expect(shown, "B shows why link/x.txt is not here: \(errors)")
            // A second device's edit and a new file while the link is there.
            try a.write("Documents/link/x.txt", "from A, edited")
            try a.write("Documents/link/y.txt", "new")
            #expect(try await eventually { try await serverPaths(fleet, a).isSuperset(of: ["Documents/link/x.txt", "Documents/link/y.txt"]) })
            await b.engine.syncNow()
            await b.engine.syncNow()
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside.url.path).isEmpty, "written outside the folder")
            let onServer = try await serverPaths(fleet, a)
            #expect(onServer.isSuperset(of: ["Documents/link", "Documents/link/x.txt", "Documents/link/y.txt", "Documents/plain.txt"]), "\(onServer.sorted())")
            #expect(a.read("Documents/link/x.txt") == "from A, edited")

            // B had the folder synced, then it was replaced by a link: still nothing deleted,
            // and nothing written through the link.
            try FileManager.default.createDirectory(at: a.url("Documents/real"), withIntermediateDirectories: true)
            try a.write("Documents/real/r.txt", "real")
            #expect(await eventually { b.read("Documents/real/r.txt") == "real" })
            try FileManager.default.removeItem(at: b.url("Documents/real"))
            try FileManager.default.createSymbolicLink(atPath: b.url("Documents/real").path, withDestinationPath: outside.url.path)
            await b.engine.syncNow()
            try a.write("Documents/real/r.txt", "real, edited")
            try a.write("Documents/real/s.txt", "second")
            #expect(try await eventually { try await serverPaths(fleet, a).contains("Documents/real/s.txt") })
            await b.engine.syncNow()
            await b.engine.syncNow()
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside.url.path).isEmpty, "written outside the folder")
            let after = try await serverPaths(fleet, a)
            #expect(after.isSuperset(of: ["Documents/real", "Documents/real/r.txt", "Documents/real/s.txt"]), "\(after.sorted())")
            #expect(a.read("Documents/real/r.txt") == "real, edited" && a.read("Documents/real/s.txt") == "second")
        }
    }

    /// #45 row 4: partial downloads were made `0644` in a `0755` folder and got their real mode
    /// only after the last byte — another local user could read a `0600` document while it
    /// downloaded. The folder is `0700` now (made so again if it was opened up), partial files are
    /// `0600`, and the file's own mode is set before it is renamed into place.
    @Test func aDownloadInProgressIsReadableByItsUserAlone() async throws {
        try await withFleet { fleet in
            let b = try await fleet.device("B")
            let partials = b.home.partialFolder(b.config.container)
            chmod(partials.path, 0o755)
            try await b.restart()
            func mode(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1 }
            #expect(mode(partials.path) == 0o700, "partial folder \(String(mode(partials.path), radix: 8))")
            // A private document another device is still uploading: B starts it and waits.
            let (uploader, _) = try await fleet.server.device("alice", name: "uploader")
            var rng = SeededRandom.forTest("engine.partial-mode")
            let bytes = rng.bytes(3 << 20)
            let m = Manifest.of(bytes)
            let v = VersionID(uuid: UUID())
            _ = try await uploader.commit(b.config.container, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: v, path: try RelativePath(validating: "Documents/private.bin"),
                                                                          kind: .file, base: nil, modified: Date(), manifest: m, permissions: 0o600))
            var chunks: [(ContentHash, [UInt8])] = [], offset = 0
            for c in m.chunks { chunks.append((c.hash, Array(bytes[offset..<offset + c.size]))); offset += c.size }
            try await uploader.uploadChunks(named: Array(chunks.prefix(chunks.count / 2)))
            func inside() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: partials.path)) ?? []).filter { $0.hasSuffix(".partial") } }
            #expect(await eventually { await b.engine.status().downloads.running == 1 && !inside().isEmpty }, "a partial file while the download waits")
            for name in inside() { #expect(mode(partials.path + "/" + name) == 0o600, "\(name): \(String(mode(partials.path + "/" + name), radix: 8))") }
            try await uploader.uploadChunks(named: Array(chunks.suffix(from: chunks.count / 2)))
            _ = try await uploader.complete(b.config.container, version: v)
            #expect(await eventually(timeout: .seconds(60)) { b.readBytes("Documents/private.bin") == bytes })
            #expect(mode(b.url("Documents/private.bin").path) == 0o600)
            // A file whose writer's mode the server does not know gets a new file's default.
            let plain = VersionID(uuid: UUID())
            let pm = try await { () async throws -> Manifest in
                let content = Array("plain".utf8), pm = Manifest.of(content)
                try await uploader.uploadChunks([content])
                return pm
            }()
            _ = try await uploader.commit(b.config.container, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: plain, path: try RelativePath(validating: "Documents/plain.txt"),
                                                                          kind: .file, base: nil, modified: Date(), manifest: pm))
            #expect(await eventually { b.read("Documents/plain.txt") == "plain" })
            let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
            let mask = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") }.flatMap { Int($0.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8) })
            #expect(mode(b.url("Documents/plain.txt").path) == 0o666 & ~mask, "default \(String(mode(b.url("Documents/plain.txt").path), radix: 8))")
        }
    }

    /// #45 row 10: the engine checked a parent with `lstat` and then acted by path, so a folder
    /// swapped for a link between the check and a rename, unlink or mkdir was followed out of the
    /// folder. Anchored at the container folder (as the engine uses it), the disk refuses every
    /// such step with `ELOOP` and changes nothing outside; plain paths would have followed.
    @Test func aFolderSwappedForALinkIsNeverFollowed() throws {
        let dir = try TempDirectory("ubiq-swap")
        defer { dir.remove() }
        let root = dir.url.appendingPathComponent("container").path, outside = dir.url.appendingPathComponent("outside").path
        try FileManager.default.createDirectory(atPath: root + "/Documents/real", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: outside + "/victim.txt"))
        try Data("ours".utf8).write(to: URL(fileURLWithPath: root + "/Documents/real/mine.txt"))
        // The swap: Documents/a is a link to a folder outside.
        try FileManager.default.createSymbolicLink(atPath: root + "/Documents/a", withDestinationPath: outside)
        let disk = SystemFolder().anchored(at: root)
        #expect(disk.makeFolder(root + "/Documents/a/made") == ELOOP)
        #expect(disk.removeFile(root + "/Documents/a/victim.txt") == ELOOP)
        #expect(disk.rename(root + "/Documents/real/mine.txt", root + "/Documents/a/mine.txt", .noReplace) == ELOOP)
        #expect(disk.rename(root + "/Documents/a/victim.txt", root + "/Documents/real/stolen.txt", .replace) == ELOOP)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside) == ["victim.txt"], "nothing changed outside")
        #expect(FileManager.default.fileExists(atPath: root + "/Documents/real/mine.txt"))
        // Inside the folder, the same steps work; the link itself can be removed.
        #expect(disk.makeFolder(root + "/Documents/real/sub") == 0)
        #expect(disk.rename(root + "/Documents/real/mine.txt", root + "/Documents/real/sub/mine.txt", .noReplace) == 0)
        #expect(disk.removeFile(root + "/Documents/a") == 0, "the link, not what it points at")
        #expect(FileManager.default.fileExists(atPath: outside + "/victim.txt"))
        // Plain paths (what the engine did before) follow the link.
        try FileManager.default.createSymbolicLink(atPath: root + "/Documents/a", withDestinationPath: outside)
        #expect(SystemFolder().makeFolder(root + "/Documents/a/made") == 0 && FileManager.default.fileExists(atPath: outside + "/made"))
    }
}
