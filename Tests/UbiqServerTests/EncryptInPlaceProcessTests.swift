import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqTesting

/// #39 §2 "`ubiq encrypt` converts an existing account": a plain account with documents on two
/// devices, settings, history and a trash is encrypted from one of them. Its folder is left
/// exactly as it was; the server then lists only sealed names and sealed content (the plain
/// copies, their history and the trash purged); the other device is signed out with its folder
/// untouched; a device let in with the recovery key gets every document and setting.
extension ProcessTests {
    @Test func anAccountWithDocumentsIsEncryptedInPlace() async throws {
        let acct = try ProcessAccount(self, user: "gus", label: "ubiq-e2e-convert")
        defer { acct.stop() }
        var (status, out, err): (Int32, String, String)
        func files(_ n: String) -> [String: [UInt8]] {
            var out: [String: [UInt8]] = [:]
            let root = acct.docs(n)
            guard let e = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else { return out }
            for case let u as URL in e where (try? u.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                out[String(u.path.dropFirst(root.path.count + 1))] = (try? Data(contentsOf: u)).map(Array.init)
            }
            return out
        }
        for n in ["desk", "laptop"] {
            (status, out, err) = try acct.login(n)
            #expect(status == 0, "\(out)\(err)")
        }
        // A plain account's life: folders, files, an edit (history), a delete (the trash), a setting.
        var rng = SeededRandom.forTest("e2e.convert")
        print("corpus seed label e2e.convert")
        for i in 0..<9 {
            let folder = acct.docs("desk").appendingPathComponent("PlainFolderMK\(i % 3)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(Array("PlainContentMK-\(i) ".utf8) + rng.bytes(Int(rng.next() % 150_000))).write(to: folder.appendingPathComponent("PlainNameMK-\(i).txt"))
        }
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("desk")])
        #expect(status == 0, "\(out)\(err)")
        try Data("PlainContentMK edited".utf8).write(to: acct.docs("desk").appendingPathComponent("PlainFolderMK0/PlainNameMK-0.txt"))
        try FileManager.default.removeItem(at: acct.docs("desk").appendingPathComponent("PlainFolderMK1/PlainNameMK-1.txt"))
        (status, out, err) = try ChildProcess.runUbiq(["kv", "set", "PlainSettingMK", "PlainValueMK", "--home", acct.home("desk")])
        #expect(status == 0, "\(out)\(err)")
        for n in ["desk", "laptop"] {
            (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home(n)])
            #expect(status == 0, "\(n): \(out)\(err)")
        }
        let before = files("desk")
        #expect(before.count == 8 && files("laptop") == before, "\(before.count) files on the desk")

        // Without a terminal it must be confirmed; with --yes it runs.
        (status, out, err) = try ChildProcess.runUbiq(["encrypt", "--home", acct.home("desk")])
        #expect(status != 0 && err.contains("--yes"), "\(out)\(err)")
        (status, out, err) = try ChildProcess.runUbiq(["encrypt", "--yes", "--home", acct.home("desk")])
        #expect(status == 0 && out.contains("RECOVERY KEY") && out.contains("signed out: laptop") && out.contains("encrypted gus end to end: 8 documents"), "\(out)\(err)")
        let recovery = try #require(ProcessAccount.recoveryKey(in: out), "\(out)")
        #expect(files("desk") == before, "the converting device's folder changed: \(files("desk").count) files")
        (status, out, err) = try ChildProcess.runUbiq(["encrypt", "--yes", "--home", acct.home("desk")])
        #expect(status != 0 && err.contains("already encrypted"), "\(out)\(err)")
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("desk")])
        #expect(status == 0, "the converted device keeps syncing: \(out)\(err)")

        // The other device is signed out; its folder is as it was.
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("laptop")])
        #expect(status != 0, "\(out)\(err)")
        #expect(files("laptop") == before, "the signed-out device's folder changed: \(files("laptop").count) files")

        // What the server lists now: sealed names, sealed content, no trash, no plain setting.
        let client = try acct.client("desk")
        #expect(try acct.config("desk")["encrypting"] == nil)
        let container = try ContainerID(validating: "iCloud.default")
        let items = try await client.changes(container, after: 0, limit: 1000).items.filter { $0.deletedAt == nil }
        #expect(items.count == 8 + 3 + 1, "\(items.count) live items")  // files, folders, Documents
        var seen: [String] = []
        for i in items {
            if i.path.string.contains("PlainFolderMK") || i.path.string.contains("PlainNameMK") { seen.append("a path holds a marker: \(i.path)") }
            guard let v = i.current else { continue }
            if v.sealed == nil { seen.append("no sealed record: \(i.path)") }
            for c in try await client.manifest(container, version: v.id).chunks where String(decoding: try await client.downloadChunk(c.hash), as: UTF8.self).contains("PlainContentMK") {
                seen.append("a chunk of \(i.path) holds a marker")
            }
            if try await client.versions(container, item: i.id).others.contains(where: { $0.sealed == nil }) { seen.append("plain history left: \(i.path)") }
        }
        #expect(try await client.trash(container).items.isEmpty, "the trash was purged")
        // The deletes the server keeps to tell devices hold no name of what was live when it was
        // converted (renamed at random first); only the item deleted before keeps its name.
        let tombstones = try await client.changes(container, after: 0, limit: 1000).items.filter { $0.deletedAt != nil }
        let named = tombstones.map(\.path.string).filter { $0.contains("PlainFolderMK") || $0.contains("PlainNameMK") }
        #expect(named == ["Documents/PlainFolderMK1/PlainNameMK-1.txt"], "\(named)")
        for e in try await client.kvAll(container).entries {
            if case .string(let s)? = e.value, s.contains("PlainValueMK") { seen.append("a plain setting value is left") }
            if e.value != nil && e.key.contains("PlainSettingMK") { seen.append("a plain setting is left") }
        }
        #expect(seen.isEmpty, "\(seen.prefix(8))")

        // A device let in with the recovery key gets every document and the setting.
        (status, out, err) = try acct.login("tablet", ["--recovery-key", recovery])
        #expect(status == 0, "\(out)\(err)")
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("tablet")])
        #expect(status == 0, "\(out)\(err)")
        #expect(files("tablet") == before, "the new device holds \(files("tablet").count) files, other than the desk's")
        (status, out, err) = try ChildProcess.runUbiq(["kv", "get", "PlainSettingMK", "--home", acct.home("tablet")])
        #expect(status == 0 && out.contains("PlainValueMK"), "\(out)\(err)")

        // The signed-out device signs in again (with the recovery key): its folder, already
        // holding everything, is matched to the sealed items — no copies, nothing lost, and the
        // desk gets nothing new from it.
        (status, out, err) = try acct.login("laptop", ["--recovery-key", recovery])
        #expect(status == 0, "\(out)\(err)")
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("laptop")])
        #expect(status == 0, "\(out)\(err)")
        #expect(files("laptop") == before, "the laptop holds \(files("laptop").keys.sorted()) after signing in again")
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("desk")])
        #expect(status == 0, "\(out)\(err)")
        #expect(files("desk") == before, "the desk holds \(files("desk").keys.sorted())")
        let live = try await client.changes(container, after: 0, limit: 1000).items.filter { $0.deletedAt == nil }
        #expect(live.count == 8 + 3 + 1, "\(live.count) live items on the server after the laptop came back")
    }
}

extension ProcessTests {
    /// A conversion cut off — after the keys were kept, then after the plain items were purged —
    /// is finished by running it again; the engines do not start on the half-converted account
    /// meanwhile; nothing of the folder or the settings is lost.
    @Test func aCutOffConversionIsFinishedByRunningItAgain() async throws {
        let acct = try ProcessAccount(self, user: "hal", label: "ubiq-e2e-convert-cut")
        defer { acct.stop() }
        var (status, out, err): (Int32, String, String)
        func cut(_ step: String) -> [String: String] { ProcessInfo.processInfo.environment.merging(["UBIQ_TEST_ENCRYPT_CUT": step]) { _, b in b } }
        (status, out, err) = try acct.login("desk")
        #expect(status == 0, "\(out)\(err)")
        var rng = SeededRandom.forTest("e2e.convert.cut")
        var written: [String: [UInt8]] = [:]
        for i in 0..<5 {
            let bytes = rng.bytes(Int(rng.next() % 90_000) + 10)
            try Data(bytes).write(to: acct.docs("desk").appendingPathComponent("doc-\(i).bin"))
            written["doc-\(i).bin"] = bytes
        }
        (status, out, err) = try ChildProcess.runUbiq(["kv", "set", "colour", "teal", "--home", acct.home("desk")])
        #expect(status == 0, "\(out)\(err)")
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("desk")])
        #expect(status == 0, "\(out)\(err)")
        func intact() -> Bool { written.allSatisfy { (try? Data(contentsOf: acct.docs("desk").appendingPathComponent($0.key))).map(Array.init) == $0.value } }

        (status, out, err) = try ChildProcess.runUbiq(["encrypt", "--yes", "--home", acct.home("desk")], environment: cut("keys"))
        #expect(status != 0 && err.contains("cut off after keys") && !out.contains("RECOVERY KEY"), "\(out)\(err)")
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("desk")])
        #expect(status != 0 && err.contains("has not finished"), "the engine waits for the conversion: \(out)\(err)")
        (status, out, err) = try ChildProcess.runUbiq(["encrypt", "--yes", "--home", acct.home("desk")], environment: cut("purge"))
        #expect(status != 0 && err.contains("cut off after purge") && out.contains("RECOVERY KEY"), "\(out)\(err)")
        let recovery = try #require(ProcessAccount.recoveryKey(in: out), "\(out)")
        #expect(intact(), "the folder changed while converting")
        (status, out, err) = try ChildProcess.runUbiq(["encrypt", "--yes", "--home", acct.home("desk")])
        #expect(status == 0 && !out.contains("RECOVERY KEY") && out.contains("5 documents"), "\(out)\(err)")
        #expect(intact())
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("desk")])
        #expect(status == 0, "\(out)\(err)")

        (status, out, err) = try acct.login("tablet", ["--recovery-key", recovery])
        #expect(status == 0, "\(out)\(err)")
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("tablet")])
        #expect(status == 0, "\(out)\(err)")
        for (name, bytes) in written { #expect((try? Data(contentsOf: acct.docs("tablet").appendingPathComponent(name))).map(Array.init) == bytes, "\(name)") }
        (status, out, err) = try ChildProcess.runUbiq(["kv", "get", "colour", "--home", acct.home("tablet")])
        #expect(status == 0 && out.contains("teal"), "\(out)\(err)")
    }
}

extension ProcessTests {
    /// Converting from a device that keeps documents only in the cloud (on demand): it fetches
    /// every one first, so the folder it sends up sealed is the whole account.
    @Test func anOnDemandDeviceFetchesEverythingBeforeItEncrypts() async throws {
        let acct = try ProcessAccount(self, user: "ivy", label: "ubiq-e2e-convert-ondemand")
        defer { acct.stop() }
        var (status, out, err): (Int32, String, String)
        (status, out, err) = try acct.login("desk")
        #expect(status == 0, "\(out)\(err)")
        var rng = SeededRandom.forTest("e2e.convert.ondemand")
        var written: [String: [UInt8]] = [:]
        for i in 0..<4 {
            let bytes = rng.bytes(Int(rng.next() % 120_000) + 10)
            try Data(bytes).write(to: acct.docs("desk").appendingPathComponent("doc-\(i).bin"))
            written["doc-\(i).bin"] = bytes
        }
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("desk")])
        #expect(status == 0, "\(out)\(err)")
        (status, out, err) = try acct.login("laptop", ["--download", "on-demand"])
        #expect(status == 0, "\(out)\(err)")
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("laptop")])
        #expect(status == 0, "\(out)\(err)")
        let heldBefore = written.keys.filter { (try? Data(contentsOf: acct.docs("laptop").appendingPathComponent($0))).map(Array.init) == written[$0] }
        #expect(heldBefore.isEmpty, "on demand, the laptop held \(heldBefore) before converting")

        (status, out, err) = try ChildProcess.runUbiq(["encrypt", "--yes", "--home", acct.home("laptop")])
        #expect(status == 0 && out.contains("4 documents"), "\(out)\(err)")
        for (name, bytes) in written {
            #expect((try? Data(contentsOf: acct.docs("laptop").appendingPathComponent(name))).map(Array.init) == bytes, "\(name) on the converting device")
        }
        let recovery = try #require(ProcessAccount.recoveryKey(in: out), "\(out)")
        (status, out, err) = try acct.login("tablet", ["--recovery-key", recovery])
        #expect(status == 0, "\(out)\(err)")
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("tablet")])
        #expect(status == 0, "\(out)\(err)")
        for (name, bytes) in written {
            #expect((try? Data(contentsOf: acct.docs("tablet").appendingPathComponent(name))).map(Array.init) == bytes, "\(name) on a new device")
        }
    }
}
