import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqTesting

/// #39 §2 revocation as a person runs it: `ubiq devices revoke NAME` on an encrypted account
/// rolls the account's key; a running daemon on another device takes the new one by push and
/// keeps syncing; what is written after opens with the remaining devices' keys and the
/// recovery key, and not with the revoked device's.
extension ProcessTests {
    @Test func revokingADeviceRollsTheKeySoItOpensNothingWrittenAfter() async throws {
        let acct = try ProcessAccount(self, user: "fay", label: "ubiq-e2e-roll")
        defer { acct.stop() }
        var (status, out, err): (Int32, String, String)
        (status, out, err) = try acct.login("desk", ["--encrypted"])
        #expect(status == 0, "\(out)\(err)")
        let recovery = try #require(ProcessAccount.recoveryKey(in: out), "\(out)")
        for n in ["laptop", "phone", "spare"] {
            (status, out, err) = try acct.login(n, ["--recovery-key", recovery])
            #expect(status == 0, "\(out)\(err)")
        }
        try Data("written before the roll".utf8).write(to: acct.docs("desk").appendingPathComponent("before.txt"))
        try Data("edited after the roll".utf8.map { _ in UInt8(ascii: "o") }).write(to: acct.docs("desk").appendingPathComponent("old.txt"))
        for n in ["desk", "laptop", "phone"] {
            (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home(n)])
            #expect(status == 0, "\(n): \(out)\(err)")
        }
        #expect((try? String(contentsOf: acct.docs("phone").appendingPathComponent("before.txt"), encoding: .utf8)) == "written before the roll")
        let phoneRing = try acct.ring("phone")
        #expect(phoneRing.current.epoch == 1)

        // The laptop runs its daemon; the desk revokes the phone.
        let daemon = try ChildProcess(ChildProcess.ubiqBinary(), ["daemon", "--home", acct.home("laptop")])
        defer { daemon.signal(SIGTERM); daemon.wait(timeout: 30) }
        #expect(daemon.waitForOutput(timeout: 60) { $0.contains("syncing") } != nil, "\(daemon.stderr)")
        (status, out, err) = try ChildProcess.runUbiq(["devices", "revoke", "phone", "--home", acct.home("desk")])
        #expect(status == 0 && out.contains("revoked phone") && out.contains("rolled the account's key to epoch 2: sealed to 3 devices and the recovery key"),
                "\(out)\(err)")
        #expect(try acct.ring("desk").current.epoch == 2)
        // The laptop's daemon takes the new key by push (bounded wait on its config).
        var laptopTook = false
        for _ in 0..<300 where !laptopTook {
            laptopTook = (try? acct.ring("laptop").current.epoch) == 2
            if !laptopTook { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(laptopTook, "\(daemon.stdout)\(daemon.stderr)")
        #expect(try acct.ring("laptop") == acct.ring("desk"))

        // Written after: a new file and an edit, on the laptop (its daemon uploads them).
        let secret = "written after the roll: the phone must not read this"
        try Data(secret.utf8).write(to: acct.docs("laptop").appendingPathComponent("after.txt"))
        try Data("edited after the roll".utf8).write(to: acct.docs("laptop").appendingPathComponent("old.txt"))
        var arrived = false
        for _ in 0..<60 where !arrived {
            (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("desk")])
            arrived = (try? String(contentsOf: acct.docs("desk").appendingPathComponent("after.txt"), encoding: .utf8)) == secret
                && (try? String(contentsOf: acct.docs("desk").appendingPathComponent("old.txt"), encoding: .utf8)) == "edited after the roll"
            if !arrived { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(arrived, "\(out)\(err)\(daemon.stderr)")

        // The phone is signed out; and what it holds opens nothing written after.
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("phone")])
        #expect(status != 0, "\(out)\(err)")
        let container = try ContainerID(validating: "iCloud.default")
        let asDesk = try acct.client("desk")
        let deskKeys = try acct.ring("desk").keys(for: container), phoneKeys = phoneRing.keys(for: container)
        var checked: Set<String> = []
        for item in try await asDesk.changes(container, after: 0, limit: 100).items {
            guard let v = item.current, let sealed = v.sealed else { continue }
            let name = try deskKeys.identity.names.open(path: item.path).string.split(separator: "/").last.map(String.init) ?? ""
            let chunks = try await asDesk.manifest(container, version: v.id).chunks
            let bytes = try await chunks.asyncMap { try await asDesk.downloadChunk($0.hash) }
            let opened = try bytes.flatMap { b in try b.withUnsafeBytes { raw in
                try deskKeys.newestFirst.lazy.compactMap { try? $0.chunks.open(raw) }.first ?? { throw CoreError(.tampered, "no key of the desk opens it") }()
            } }
            switch name {
            case "after.txt", "old.txt":
                #expect(sealed.hasPrefix("e2:"), "\(name)")
                #expect(String(decoding: opened, as: UTF8.self) == (name == "after.txt" ? secret : "edited after the roll"))
                do { _ = try RecordCipher(ring: phoneKeys).open(sealed, version: v.id, item: item.id); Issue.record("the phone opened \(name)'s record") } catch let e as CoreError {
                    #expect(e.code == .keyMissing, "\(e)")
                }
                for b in bytes { #expect((try? b.withUnsafeBytes { try phoneKeys.current.chunks.open($0) }) == nil, "the phone opened a chunk of \(name)") }
                checked.insert(name)
            case "before.txt":
                #expect(!sealed.contains(":") && String(decoding: opened, as: UTF8.self) == "written before the roll")
                #expect((try? RecordCipher(ring: phoneKeys).open(sealed, version: v.id, item: item.id)) != nil, "what was written before still opens with the old key")
                checked.insert(name)
            default: break
            }
        }
        #expect(checked == ["after.txt", "old.txt", "before.txt"])
        // Nothing is left on the server for the phone.
        let left = try await asDesk.accountKeys().keys.sorted()
        let phoneID = (try acct.config("phone")["deviceID"] as? String ?? "?").lowercased()
        #expect(left.contains("devices") && left.contains("keyring.recovery") && !left.contains { $0.hasSuffix(phoneID) }, "\(left)")

        // A new device with the recovery key gets every generation and reads what was written after.
        (status, out, err) = try acct.login("tablet", ["--recovery-key", recovery])
        #expect(status == 0, "\(out)\(err)")
        #expect(try acct.ring("tablet") == acct.ring("desk"))
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("tablet")])
        #expect(status == 0, "\(out)\(err)")
        #expect((try? String(contentsOf: acct.docs("tablet").appendingPathComponent("after.txt"), encoding: .utf8)) == secret)
        #expect((try? String(contentsOf: acct.docs("tablet").appendingPathComponent("before.txt"), encoding: .utf8)) == "written before the roll")

        // A device that was away during the roll (no daemon: its config still holds epoch 1)
        // approves a new one: it takes the new generation first, and the new device gets it.
        #expect(try acct.ring("spare").current.epoch == 1)
        let waiting = try ChildProcess(ChildProcess.ubiqBinary(), ["login", acct.url, "--user", "fay", "--password-stdin", "--home", acct.home("pad"), "--device", "pad",
                                                                   "--approval-wait", "60"], stdin: "pw-fay\n")
        let shown = waiting.waitForOutput(timeout: 60) { $0.contains("ubiq devices approve ") }
        let code = try #require(shown?.split(separator: "\n").first { $0.contains("ubiq devices approve ") }?.split(separator: " ").last.map(String.init), "\(waiting.stderr)")
        (status, out, err) = try ChildProcess.runUbiq(["devices", "approve", code, "--home", acct.home("spare")])
        #expect(status == 0 && out.contains("approved pad"), "\(out)\(err)")
        #expect(waiting.wait(timeout: 60) == 0, "\(waiting.stdout)\(waiting.stderr)")
        #expect(try acct.ring("spare") == acct.ring("desk") && acct.ring("pad") == acct.ring("desk"))
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", acct.home("pad")])
        #expect(status == 0 && (try? String(contentsOf: acct.docs("pad").appendingPathComponent("after.txt"), encoding: .utf8)) == secret, "\(out)\(err)")
    }
}

extension Sequence {
    func asyncMap<T>(_ body: (Element) async throws -> T) async rethrows -> [T] {
        var out: [T] = []
        for e in self { out.append(try await body(e)) }
        return out
    }
}
