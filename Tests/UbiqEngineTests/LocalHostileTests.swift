import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqEngine
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
}
