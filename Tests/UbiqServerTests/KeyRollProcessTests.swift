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
        let dir = try TempDirectory("ubiq-e2e-roll")
        defer { dir.remove() }
        let data = dir.url.appendingPathComponent("d").path
        var (status, out, err) = try ChildProcess.runUbiq(["server", "user", "add", "fay", "--password-stdin", "--data", data], stdin: "pw-fay\n")
        #expect(status == 0, "\(err)")
        let (server, url) = try startServer(data)
        defer { server.signal(SIGKILL); server.wait() }
        func home(_ n: String) -> String { dir.url.appendingPathComponent(n).path }
        func docs(_ n: String) -> URL { URL(fileURLWithPath: home(n)).appendingPathComponent("Ubiquity/iCloud.default/Documents") }
        func config(_ n: String) throws -> [String: Any] {
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: home(n)).appendingPathComponent("config/config.json"))) as? [String: Any] ?? [:]
        }
        func ring(_ n: String) throws -> AccountKeyring { try AccountKeyring(text: try #require(try config(n)["accountKey"] as? String)) }
        func login(_ n: String, _ extra: [String]) throws -> (Int32, String, String) {
            try ChildProcess.runUbiq(["login", url, "--user", "fay", "--password-stdin", "--home", home(n), "--device", n] + extra, stdin: "pw-fay\n")
        }
        (status, out, err) = try login("desk", ["--encrypted"])
        #expect(status == 0, "\(out)\(err)")
        let recovery = try #require(out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.count == 35 && $0.split(separator: "-").count == 6 })
        for n in ["laptop", "phone", "spare"] {
            (status, out, err) = try login(n, ["--recovery-key", recovery])
            #expect(status == 0, "\(out)\(err)")
        }
        try Data("written before the roll".utf8).write(to: docs("desk").appendingPathComponent("before.txt"))
        try Data("edited after the roll".utf8.map { _ in UInt8(ascii: "o") }).write(to: docs("desk").appendingPathComponent("old.txt"))
        for n in ["desk", "laptop", "phone"] {
            (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", home(n)])
            #expect(status == 0, "\(n): \(out)\(err)")
        }
        #expect((try? String(contentsOf: docs("phone").appendingPathComponent("before.txt"), encoding: .utf8)) == "written before the roll")
        let phoneRing = try ring("phone")
        #expect(phoneRing.current.epoch == 1)

        // The laptop runs its daemon; the desk revokes the phone.
        let daemon = try ChildProcess(ChildProcess.ubiqBinary(), ["daemon", "--home", home("laptop")])
        defer { daemon.signal(SIGTERM); daemon.wait(timeout: 30) }
        #expect(daemon.waitForOutput(timeout: 60) { $0.contains("syncing") } != nil, "\(daemon.stderr)")
        (status, out, err) = try ChildProcess.runUbiq(["devices", "revoke", "phone", "--home", home("desk")])
        #expect(status == 0 && out.contains("revoked phone") && out.contains("rolled the account's key to epoch 2: sealed to 3 devices and the recovery key"),
                "\(out)\(err)")
        #expect(try ring("desk").current.epoch == 2)
        // The laptop's daemon takes the new key by push (bounded wait on its config).
        var laptopTook = false
        for _ in 0..<300 where !laptopTook {
            laptopTook = (try? ring("laptop").current.epoch) == 2
            if !laptopTook { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(laptopTook, "\(daemon.stdout)\(daemon.stderr)")
        #expect(try ring("laptop") == ring("desk"))

        // Written after: a new file and an edit, on the laptop (its daemon uploads them).
        let secret = "written after the roll: the phone must not read this"
        try Data(secret.utf8).write(to: docs("laptop").appendingPathComponent("after.txt"))
        try Data("edited after the roll".utf8).write(to: docs("laptop").appendingPathComponent("old.txt"))
        var arrived = false
        for _ in 0..<60 where !arrived {
            (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", home("desk")])
            arrived = (try? String(contentsOf: docs("desk").appendingPathComponent("after.txt"), encoding: .utf8)) == secret
                && (try? String(contentsOf: docs("desk").appendingPathComponent("old.txt"), encoding: .utf8)) == "edited after the roll"
            if !arrived { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(arrived, "\(out)\(err)\(daemon.stderr)")

        // The phone is signed out; and what it holds opens nothing written after.
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", home("phone")])
        #expect(status != 0, "\(out)\(err)")
        let container = try ContainerID(validating: "iCloud.default")
        let asDesk = UbiqAPIClient(baseURL: url, token: try #require(try config("desk")["token"] as? String))
        let deskKeys = try ring("desk").keys(for: container), phoneKeys = phoneRing.keys(for: container)
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
                do { _ = try RecordCipher(ring: phoneKeys).open(sealed, version: v.id); Issue.record("the phone opened \(name)'s record") } catch let e as CoreError {
                    #expect(e.code == .keyMissing, "\(e)")
                }
                for b in bytes { #expect((try? b.withUnsafeBytes { try phoneKeys.current.chunks.open($0) }) == nil, "the phone opened a chunk of \(name)") }
                checked.insert(name)
            case "before.txt":
                #expect(!sealed.contains(":") && String(decoding: opened, as: UTF8.self) == "written before the roll")
                #expect((try? RecordCipher(ring: phoneKeys).open(sealed, version: v.id)) != nil, "what was written before still opens with the old key")
                checked.insert(name)
            default: break
            }
        }
        #expect(checked == ["after.txt", "old.txt", "before.txt"])
        // Nothing is left on the server for the phone.
        let left = try await asDesk.accountKeys().keys.sorted()
        let phoneID = (try config("phone")["deviceID"] as? String ?? "?").lowercased()
        #expect(left.contains("devices") && left.contains("keyring.recovery") && !left.contains { $0.hasSuffix(phoneID) }, "\(left)")

        // A new device with the recovery key gets every generation and reads what was written after.
        (status, out, err) = try login("tablet", ["--recovery-key", recovery])
        #expect(status == 0, "\(out)\(err)")
        #expect(try ring("tablet") == ring("desk"))
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", home("tablet")])
        #expect(status == 0, "\(out)\(err)")
        #expect((try? String(contentsOf: docs("tablet").appendingPathComponent("after.txt"), encoding: .utf8)) == secret)
        #expect((try? String(contentsOf: docs("tablet").appendingPathComponent("before.txt"), encoding: .utf8)) == "written before the roll")

        // A device that was away during the roll (no daemon: its config still holds epoch 1)
        // approves a new one: it takes the new generation first, and the new device gets it.
        #expect(try ring("spare").current.epoch == 1)
        let waiting = try ChildProcess(ChildProcess.ubiqBinary(), ["login", url, "--user", "fay", "--password-stdin", "--home", home("pad"), "--device", "pad",
                                                                   "--approval-wait", "60"], stdin: "pw-fay\n")
        let shown = waiting.waitForOutput(timeout: 60) { $0.contains("ubiq devices approve ") }
        let code = try #require(shown?.split(separator: "\n").first { $0.contains("ubiq devices approve ") }?.split(separator: " ").last.map(String.init), "\(waiting.stderr)")
        (status, out, err) = try ChildProcess.runUbiq(["devices", "approve", code, "--home", home("spare")])
        #expect(status == 0 && out.contains("approved pad"), "\(out)\(err)")
        #expect(waiting.wait(timeout: 60) == 0, "\(waiting.stdout)\(waiting.stderr)")
        #expect(try ring("spare") == ring("desk") && ring("pad") == ring("desk"))
        (status, out, err) = try ChildProcess.runUbiq(["sync", "--home", home("pad")])
        #expect(status == 0 && (try? String(contentsOf: docs("pad").appendingPathComponent("after.txt"), encoding: .utf8)) == secret, "\(out)\(err)")
    }
}

extension Sequence {
    func asyncMap<T>(_ body: (Element) async throws -> T) async rethrows -> [T] {
        var out: [T] = []
        for e in self { out.append(try await body(e)) }
        return out
    }
}
