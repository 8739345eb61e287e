import Foundation
import Testing
import UbiqCore
import UbiqTesting

extension ProcessBoundTests {
    /// #23 §3: an administrator who can act, and a user who can revoke a lost laptop — the real
    /// binary against a real server process, as a person runs them.
    @Suite("Admin commands (ubiq server user/device, ubiq devices)", .serialized)
    struct AdminCommandTests {
        typealias Setup = ItemCommandTests.Setup

        func json(_ text: String) -> Any? { try? JSONSerialization.jsonObject(with: Data(text.utf8)) }

        @Test func usersAndDevicesAreManagedFromTheCommandLine() async throws {
            let s = try Setup()
            defer { s.teardown() }
            let data = s.dir.url.appendingPathComponent("server").path
            func admin(_ args: [String], stdin: String = "") throws -> (Int32, String, String) {
                try ChildProcess.runUbiq(["server"] + args + ["--data", data], stdin: stdin)
            }
            try s.login("laptop"); try s.login("phone")
            // The account's devices, from one of them.
            var (st, out, err) = try s.ubiq("laptop", ["devices", "--json"])
            #expect(st == 0, "\(err)")
            let listed = json(out) as? [[String: Any]] ?? []
            #expect(Set(listed.compactMap { $0["name"] as? String }) == ["laptop", "phone"], "\(out)")
            #expect(listed.first { $0["name"] as? String == "laptop" }?["current"] as? Bool == true)
            // The administrator's view.
            (st, out, err) = try admin(["user", "list", "--json"])
            #expect(st == 0, "\(err)")
            let users = json(out) as? [[String: Any]] ?? []
            #expect(users.compactMap { $0["name"] as? String } == ["alice", "bob"], "\(out)")
            #expect(users.first?["devices"] as? Int == 2, "\(out)")
            (st, out, _) = try admin(["device", "list", "alice"])
            #expect(st == 0 && out.contains("laptop") && out.contains("phone") && out.contains("signed in"), "\(out)")
            // A lost phone, revoked by its owner from the laptop: it can no longer reach the account.
            #expect(try s.ubiq("laptop", ["devices", "revoke", "laptop"]).0 == 1, "a device does not revoke itself")
            (st, out, err) = try s.ubiq("laptop", ["devices", "revoke", "phone"])
            #expect(st == 0 && out.contains("revoked phone"), "\(out)\(err)")
            (st, _, err) = try s.ubiq("phone", ["devices"])
            #expect(st == 1 && err.contains("not signed in"), "\(err)")
            (st, out, _) = try s.ubiq("laptop", ["devices"])
            #expect(out.contains("revoked"), "\(out)")
            // The administrator revokes the laptop too (by name), sets a quota, a password.
            (st, out, err) = try admin(["device", "revoke", "alice", "laptop"])
            #expect(st == 0 && out.contains("revoked laptop"), "\(out)\(err)")
            #expect(try s.ubiq("laptop", ["devices"]).0 == 1)
            #expect(try admin(["device", "revoke", "alice", "nope"]).2.contains("no device 'nope'"))
            (st, out, err) = try admin(["user", "quota", "alice", "2GiB"])
            #expect(st == 0 && out.hasPrefix("quota of alice is 2"), "\(out)\(err)")
            #expect((json(try admin(["user", "list", "--json"]).1) as? [[String: Any]])?.first?["quota"] as? Int == 2 << 30)
            #expect(try admin(["user", "quota", "alice", "lots"]).0 != 0)
            (st, _, err) = try admin(["user", "passwd", "alice", "--password-stdin"], stdin: "new-pw\n")
            #expect(st == 0, "\(err)")
            #expect(throws: CoreError.self) { try s.login("tablet") }  // the old password ("pw") is refused
            let (ls, _, lerr) = try ChildProcess.runUbiq(["login", s.url, "--user", "alice", "--password-stdin", "--device", "tablet", "--home", s.home("tablet")],
                                                         stdin: "new-pw\n")
            #expect(ls == 0, "\(lerr)")
            // Deleting needs --yes; then the account is gone.
            (st, _, err) = try admin(["user", "delete", "alice"])
            #expect(st == 1 && err.contains("--yes"), "\(err)")
            (st, _, err) = try admin(["user", "delete", "alice", "--yes"])
            #expect(st == 0, "\(err)")
            #expect(try s.ubiq("tablet", ["devices"]).0 == 1, "a deleted account's token still works")
            #expect((json(try admin(["user", "list", "--json"]).1) as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["bob"])
            #expect(try admin(["user", "delete", "nobody", "--yes"]).2.contains("no user 'nobody'"))
        }
    }
}
