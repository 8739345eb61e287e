import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqProtocol
import UbiqTesting

/// Names as long as a folder holds (255 bytes). An encrypted account refused names over 160
/// bytes (their sealed tokens did not fit the server's name limit), so such a file never left
/// its device; and a name the server holds that no folder can (a client's rename to 300 bytes)
/// must cost nothing but an error on that item.
@Suite("Long names", .serialized)
struct LongNameTests {
    /// 255 bytes: 125 two-byte letters, `x.txt`.
    static let longest = String(repeating: "é", count: 125) + "x.txt"

    @Test(arguments: [Backend.embedded, .encrypted])
    func nameOfTheLongestAFolderHoldsSyncsAndComesBackFromTheTrash(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            let long = "Documents/" + Self.longest
            let cjk = "Documents/" + String(repeating: "日本語", count: 28)  // 252 bytes, a folder
            try FileManager.default.createDirectory(at: a.url(cjk), withIntermediateDirectories: true)
            try a.write(long, "the longest name")
            try a.write(cjk + "/" + Self.longest, "inside a long folder")
            let synced = await eventually(timeout: .seconds(30)) { b.read(long) == "the longest name" && b.read(cjk + "/" + Self.longest) == "inside a long folder" }
            let errorsA = await a.engine.status().errors, errorsB = await b.engine.status().errors
            #expect(synced, "\(errorsA) \(errorsB)")
            #expect(errorsA.isEmpty)

            // Deleted, the name taken again, then restored: the server's ` (restored)` makes a
            // name longer than a folder holds, so it is cut short (keeping the extension).
            try FileManager.default.removeItem(at: a.url(long))
            #expect(await eventually(timeout: .seconds(30)) { !b.exists(long) })
            await a.engine.syncNow()
            try a.write(long, "a new file of that name")
            #expect(await eventually(timeout: .seconds(30)) { b.read(long) == "a new file of that name" })
            let trash = try await a.engine.trash()
            #expect(trash.contains { $0.path.string == long }, "\(trash.map(\.path))")
            _ = try await a.engine.restore(try RelativePath(validating: long))
            let wanted = RelativePath.suffixed(Self.longest, " (restored)")
            #expect(wanted.utf8.count <= RelativePath.maxNameBytes && wanted.hasSuffix("é (restored).txt"), "\(wanted)")
            let restored = await eventually(timeout: .seconds(30)) { a.read("Documents/" + wanted) == "the longest name" && b.read("Documents/" + wanted) == "the longest name" }
            let afterA = await a.engine.status().errors, afterB = await b.engine.status().errors
            #expect(restored, "\(afterA) \(afterB)")
            #expect(a.read(long) == "a new file of that name" && b.read(long) == "a new file of that name")
            #expect(afterA.isEmpty && afterB.isEmpty)
        }
    }

    /// A name only the server can hold (another client renamed a file to 300 bytes): both
    /// devices keep the file under its old name and say why; everything else keeps syncing; a
    /// rename to a name that fits lands.
    /// True once `d` shows, for each of `paths`, that its name is too long for a folder.
    static func shows(_ d: TestDevice, _ paths: [String]) async -> Bool {
        let shown = await eventually(timeout: .seconds(30)) {
            let errors = await d.engine.status().errors
            return paths.allSatisfy { p in errors.contains { $0.path == p && $0.message.contains("longer than a folder holds (255 bytes)") } }
        }
        if !shown { print("\(d.config.deviceName) shows \(await d.engine.status().errors)") }
        return shown
    }

    @Test func aNameNoFolderHoldsCostsOnlyThatItem() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/report.txt", "the report")
            #expect(await eventually(timeout: .seconds(30)) { b.read("Documents/report.txt") == "the report" })
            let client = UbiqAPIClient(baseURL: fleet.server.baseURL, token: a.config.token, trusting: fleet.server.trusted)
            let item = try #require(try await client.changes(a.config.container, after: 0).items.first { $0.path.string == "Documents/report.txt" })
            let tooLong = try RelativePath(validating: "Documents/" + String(repeating: "r", count: 300) + ".txt")
            _ = try await client.move(a.config.container, item: item.id, to: tooLong)
            for d in [a, b] { await d.engine.syncNow() }
            for d in [a, b] {
                #expect(await Self.shows(d, ["Documents/report.txt"]))
                #expect(d.read("Documents/report.txt") == "the report", "the device kept the file")
            }
            // A new file and a new folder of such names: not here, said why, nothing else held up.
            let (writer, _) = try await fleet.server.device("alice", name: "writer")
            let content = Array("from a client".utf8)
            try await writer.uploadChunks([content])
            let newFile = try RelativePath(validating: "Documents/" + String(repeating: "n", count: 290))
            let newFolder = try RelativePath(validating: "Documents/" + String(repeating: "f", count: 270))
            _ = try await writer.commit(a.config.container, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: newFile,
                                                                        kind: .file, base: nil, modified: Date(), manifest: Manifest.of(content)))
            let folderID = ItemID(uuid: UUID())
            _ = try await writer.commit(a.config.container, CommitRequest(itemID: folderID, versionID: VersionID(uuid: UUID()), path: newFolder,
                                                                        kind: .folder, base: nil, modified: Date(), manifest: nil))
            for d in [a, b] { #expect(await Self.shows(d, [newFile.string, newFolder.string])) }
            // Everything else still syncs, both ways.
            try a.write("Documents/other.txt", "from A")
            try b.write("Documents/reply.txt", "from B")
            #expect(await eventually(timeout: .seconds(30)) { b.read("Documents/other.txt") == "from A" && a.read("Documents/reply.txt") == "from B" })
            let onServer = try await client.changes(a.config.container, after: 0).items.filter { $0.deletedAt == nil }.map(\.path.string)
            #expect(onServer.contains(tooLong.string), "the server's item is left alone: \(onServer)")
            // Renamed to a name that fits: both devices follow, the error goes.
            _ = try await client.move(a.config.container, item: item.id, to: try RelativePath(validating: "Documents/short.txt"))
            #expect(await eventually(timeout: .seconds(30)) { a.read("Documents/short.txt") == "the report" && b.read("Documents/short.txt") == "the report" })
            #expect(!a.exists("Documents/report.txt") && !b.exists("Documents/report.txt"))
            _ = try await client.move(a.config.container, item: folderID, to: try RelativePath(validating: "Documents/folder"))
            #expect(await eventually(timeout: .seconds(30)) { FileManager.default.fileExists(atPath: a.url("Documents/folder").path) && FileManager.default.fileExists(atPath: b.url("Documents/folder").path) })
            for d in [a, b] {
                let left = await eventually(timeout: .seconds(30)) { await d.engine.status().errors.map(\.path) == [newFile.string] }
                let errors = await d.engine.status().errors
                #expect(left, "only the file still too long is in error: \(errors)")
            }
        }
    }
}
