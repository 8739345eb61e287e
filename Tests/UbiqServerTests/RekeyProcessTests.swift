import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqTesting

/// #39 §2 `ubiq rekey` as a person runs it: after `devices revoke` rolled the account's key,
/// what was written before is sealed again with the new key — documents as new versions (the
/// same content on every device, no conflict), settings written again — so the revoked
/// device's keys open none of the current content; run again it finds nothing to do; `--roll`
/// makes a generation of its own first, through a running daemon, and the other devices take it.
extension ProcessTests {
    @Test func rekeySealsWhatWasWrittenBeforeTheRollWithTheNewKey() async throws {
        let acct = try ProcessAccount(self, user: "gus", label: "ubiq-e2e-rekey")
        defer { acct.stop() }
        var (status, out, err): (Int32, String, String)
        (status, out, err) = try acct.login("desk", ["--encrypted"])
        #expect(status == 0, "\(out)\(err)")
        let recovery = try #require(ProcessAccount.recoveryKey(in: out), "\(out)")
        for n in ["laptop", "phone"] {
            (status, out, err) = try acct.login(n, ["--recovery-key", recovery])
            #expect(status == 0, "\(out)\(err)")
        }
        // Written before: a file of several chunks, one in a folder, a setting.
        var rng = SeededRandom(seed: 39)
        let big = Data((0..<600_000).map { _ in UInt8.random(in: 0...255, using: &rng) })
        try big.write(to: acct.docs("desk").appendingPathComponent("big.bin"))
        try FileManager.default.createDirectory(at: acct.docs("desk").appendingPathComponent("Plans"), withIntermediateDirectories: true)
        try Data("the plan".utf8).write(to: acct.docs("desk").appendingPathComponent("Plans/plan.txt"))
        (status, out, err) = try ChildProcess.runUbiq(["kv", "set", "volume", "11", "--home", acct.home("desk")])
        #expect(status == 0, "\(out)\(err)")
        for n in ["desk", "laptop", "phone"] {
            (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home(n)])
            #expect(status == 0, "\(n): \(out)\(err)")
        }
        #expect(try Data(contentsOf: acct.docs("laptop").appendingPathComponent("big.bin")) == big)

        // One generation: nothing to seal again.
        (status, out, err) = try ChildProcess.runUbiq(["rekey", "--home", acct.home("desk")])
        #expect(status == 0 && out.contains("nothing to seal again") && out.contains("epoch 1"), "\(out)\(err)")

        // The laptop runs its daemon; the desk revokes the phone (epoch 2) and rekeys.
        let phoneRing = try acct.ring("phone")
        let daemon = try ChildProcess(ChildProcess.ubiqBinary(), ["daemon", "--home", acct.home("laptop")])
        defer { daemon.signal(SIGTERM); daemon.wait(timeout: 30) }
        #expect(daemon.waitForOutput(timeout: 60) { $0.contains("syncing") } != nil, "\(daemon.stderr)")
        (status, out, err) = try ChildProcess.runUbiq(["devices", "revoke", "phone", "--home", acct.home("desk")])
        #expect(status == 0 && out.contains("epoch 2"), "\(out)\(err)")
        (status, out, err) = try ChildProcess.runUbiq(["rekey", "--home", acct.home("desk")])
        #expect(status == 0 && out.contains("iCloud.default: sealed 2 documents and 1 setting again with the account's key of epoch 2"), "\(out)\(err)")
        try await expectSealed(acct, epoch: 2, notOpenedBy: phoneRing, big: big)

        // The laptop's daemon takes the new versions: the same content, no conflict.
        var settled = false
        for _ in 0..<120 where !settled {
            (status, out, err) = try ChildProcess.runUbiq(["status", "--json", "--home", acct.home("laptop")])
            let s = (try? JSONSerialization.jsonObject(with: Data(out.utf8))) as? [String: Any]
            settled = status == 0 && (s?["idle"] as? Bool) == true && (s?["conflicts"] as? Int) == 0
            if !settled { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(settled, "\(out)\(err)")
        #expect(try Data(contentsOf: acct.docs("laptop").appendingPathComponent("big.bin")) == big)
        #expect((try? String(contentsOf: acct.docs("laptop").appendingPathComponent("Plans/plan.txt"), encoding: .utf8)) == "the plan")
        (status, out, err) = try ChildProcess.runUbiq(["versions", "Documents/big.bin", "--home", acct.home("desk")])
        #expect(status == 0 && !out.contains("conflict"), "\(out)\(err)")

        // Again: everything already is.
        (status, out, err) = try ChildProcess.runUbiq(["rekey", "--home", acct.home("desk")])
        #expect(status == 0 && out.contains("sealed 0 documents and 0 settings again") && out.contains("(2 documents already were)"), "\(out)\(err)")

        // --roll through the laptop's daemon: epoch 3; the desk takes it at its next sync.
        (status, out, err) = try ChildProcess.runUbiq(["rekey", "--roll", "--home", acct.home("laptop")])
        #expect(status == 0 && out.contains("rolled the account's key to epoch 3") && out.contains("sealed 2 documents and 1 setting again"), "\(out)\(err)")
        try await expectSealed(acct, epoch: 3, notOpenedBy: phoneRing, big: big)
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("desk")])
        #expect(status == 0, "\(out)\(err)")
        #expect(try acct.ring("desk").current.epoch == 3)
        (status, out, err) = try ChildProcess.runUbiq(["kv", "get", "volume", "--home", acct.home("desk")])
        #expect(status == 0 && out.contains("11"), "\(out)\(err)")

        // A plain account has nothing to seal.
        let plain = try ProcessAccount(self, user: "hal", label: "ubiq-plain-rekey")
        defer { plain.stop() }
        (status, out, err) = try plain.login("one")
        #expect(status == 0, "\(out)\(err)")
        (status, out, err) = try ChildProcess.runUbiq(["rekey", "--home", plain.home("one")])
        #expect(status == 1 && err.contains("not encrypted end to end"), "\(out)\(err)")
    }

    /// Every live document's current version sealed with `epoch` (record and chunks), none of
    /// it opened by `old` (the revoked device's ring), the content still `big`; every setting
    /// value sealed with `epoch`.
    func expectSealed(_ acct: ProcessAccount, epoch: Int, notOpenedBy old: AccountKeyring, big: Data) async throws {
        let container = try ContainerID(validating: "iCloud.default")
        let asDesk = try acct.client("desk")
        let deskKeys = try acct.ring("laptop").keys(for: container), oldKeys = old.keys(for: container)
        var files = 0
        for item in try await asDesk.changes(container, after: 0, limit: 100).items where item.kind == .file && item.deletedAt == nil {
            let v = try #require(item.current)
            let sealed = try #require(v.sealed)
            #expect(sealed.hasPrefix("e\(epoch):"), "\(item.path)")
            #expect((try? RecordCipher(ring: oldKeys).open(sealed, version: v.id, item: item.id)) == nil)
            let name = try deskKeys.identity.names.open(path: item.path).name
            var opened = Data()
            for c in try await asDesk.manifest(container, version: v.id).chunks {
                let b = try await asDesk.downloadChunk(c.hash)
                #expect((try? b.withUnsafeBytes { try oldKeys.current.chunks.open($0) }) == nil, "the revoked device opened a chunk of \(name)")
                opened += try b.withUnsafeBytes { try deskKeys.keys(epoch: epoch).chunks.open($0) }
            }
            if name == "big.bin" { #expect(opened == big) }
            files += 1
        }
        #expect(files == 2)
        let values = try await asDesk.kvAll(container).entries.compactMap(\.value)
        #expect(values.count == 1 && values.allSatisfy { SettingsCipher.epoch(of: $0) == epoch }, "\(values)")
    }
}
