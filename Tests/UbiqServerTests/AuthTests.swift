import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqServer
import UbiqStorage
import UbiqTesting

@Suite("Accounts and tokens")
struct AuthTests {
    @Test(arguments: DatabaseKind.available) func loginIssuesPerDeviceTokensThatCanBeRevoked(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, laptopID) = try await server.device("alice", name: "laptop")
            let (phone, phoneID) = try await server.device("alice", name: "phone")
            #expect(laptopID != phoneID)
            let info = try await laptop.account()
            #expect(info.user == "alice" && info.deviceName == "laptop" && info.quota == 1 << 30 && info.used == 0)
            #expect(try await phone.account().deviceName == "phone")

            // Revoke the phone's own token: it is signed out, the laptop is not.
            try await phone.revoke()
            await expectCode(.unauthorized) { _ = try await phone.account() }
            #expect(try await laptop.account().user == "alice")

            // Revoke another device's tokens.
            let (tablet, tabletID) = try await server.device("alice", name: "tablet")
            try await laptop.revoke(device: tabletID)
            await expectCode(.unauthorized) { _ = try await tablet.account() }
            // Bob cannot revoke Alice's devices.
            let (bob, _) = try await server.device("bob")
            await expectCode(.notFound) { try await bob.revoke(device: laptopID) }
            #expect(try await laptop.account().user == "alice")
        }
    }

    @Test(arguments: DatabaseKind.available) func badCredentialsAreRefused(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let anon = UbiqAPIClient(baseURL: server.baseURL)
            await expectCode(.badCredentials) { _ = try await anon.login(user: "alice", password: "wrong", deviceName: "x") }
            await expectCode(.badCredentials) { _ = try await anon.login(user: "nobody", password: "secret-pw", deviceName: "x") }
            await expectCode(.invalidValue) { _ = try await anon.login(user: "alice", password: "secret-pw", deviceName: "") }
            // A made-up token is refused on every route.
            let forged = UbiqAPIClient(baseURL: server.baseURL, token: "ubq_forged")
            await expectCode(.unauthorized) { _ = try await forged.account() }
            await expectCode(.unauthorized) { _ = try await forged.changes(notes, after: 0) }
            await expectCode(.unauthorized) { _ = try await forged.kvAll(notes) }
            await expectCode(.unauthorized) { _ = try await forged.missingChunks([]) }
        }
    }

    @Test(arguments: DatabaseKind.available) func passwordsAreStoredOnlyAsSlowSaltedHashes(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            // Test servers hash with fewer rounds (see `TestServer.start`); a server's own setting:
            #expect(try await ServerServices.embedded(at: server.directory.url.appendingPathComponent("fresh")).passwordRounds == PasswordHasher.rounds)
            var services = server.services
            services.passwordRounds = PasswordHasher.rounds
            try await services.addUser(name: "carol", password: "secret-pw", quota: 1 << 20)
            let account = try #require(try await server.services.metadata.account(named: "carol"))
            #expect(account.password.iterations >= 100_000)
            #expect(account.password.salt.count >= 16)
            #expect(!String(decoding: account.password.derived, as: UTF8.self).contains("secret-pw"))
            if server.database == .sqlite {
                let file = try Data(contentsOf: server.directory.url.appendingPathComponent("metadata.sqlite"))
                #expect(file.range(of: Data("secret-pw".utf8)) == nil)
            }
        }
    }

    /// #23 row 4: the throttle was checked before hashing and recorded after, so 40 parallel
    /// guesses got 37 checked; one place guessing locked the user out everywhere; and hashing
    /// ran on the request threads, so 32 logins raised everyone's latency to ~7 s. Now a slot
    /// is taken before hashing, limits are per user and address, per address and (higher) per
    /// user, and hashing runs on a small pool of its own.
    @Test(arguments: DatabaseKind.available) func aLoginFloodIsThrottledWhereItComesFromAndStallsNobody(_ db: DatabaseKind) async throws {
        // The clock stands still: the throttle's 60 s window never slides under a slow run (a
        // loaded CI box took over a minute for the 40 one-by-one guesses and let one more in).
        let frozen = Date()
        try await withServer(db, clock: { frozen }) { server in
            let port = server.port
            // 40 guesses at once from one address: at most 10 are checked.
            let codes = try await offThePool {
                try (0..<40).map { _ in try RawSocket.login(port: port, from: "127.0.0.2", user: "alice", password: "guess") }
            }
            let parallel = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<40 { group.addTask { try await offThePool { try RawSocket.login(port: port, from: "127.0.0.3", user: "alice", password: "guess") } } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(codes.filter { $0 == 401 }.count == 10 && codes.filter { $0 == 429 }.count == 30, "one by one: \(codes)")
            #expect(parallel.filter { $0 == 401 }.count <= 10 && parallel.filter { $0 == 429 }.count >= 30, "at once: \(parallel.sorted())")
            // The user is not locked out from elsewhere (127.0.0.1, the test's own client).
            let (alice, _) = try await server.device("alice")
            // One address guessing many names meets the per-address limit.
            let names = try await offThePool {
                try (0..<35).map { i in try RawSocket.login(port: port, from: "127.0.0.4", user: "nobody\(i)", password: "guess") }
            }
            #expect(names.filter { $0 == 401 }.count == 30 && names.suffix(5).allSatisfy { $0 == 429 }, "\(names)")
            // Logins from many addresses at once do not stall other requests. Not a speed
            // measure: the bound scales with what one login costs on this machine right now
            // (a loaded CI box slows both; a full local run once took 10× one login). Hashing
            // on the request threads queued the request behind ~16 hashes on its event loop;
            // on the hashing pool it waits behind none.
            let one = ContinuousClock.now
            #expect(try await offThePool { try RawSocket.login(port: port, from: "127.0.2.1", user: "solo", password: "pw") } == 401)
            let oneLogin = ContinuousClock.now - one
            let bound = max(.seconds(3), oneLogin * 12)
            let flood = Task {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for i in 0..<32 { group.addTask { try await offThePool { try RawSocket.login(port: port, from: "127.0.1.\(i + 1)", user: "u\(i)", password: "pw") } } }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
            }
            try await Task.sleep(for: .milliseconds(100))
            let started = ContinuousClock.now
            #expect(try await alice.account().user == "alice")
            let took = ContinuousClock.now - started
            let floodCodes = try await flood.value
            #expect(took < bound, "an account request took \(took) during a login flood (one login alone: \(oneLogin))")
            #expect(floodCodes.allSatisfy { $0 == 401 || $0 == 429 }, "\(floodCodes)")
        }
    }

    @Test(arguments: DatabaseKind.available) func repeatedFailuresAreThrottled(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let anon = UbiqAPIClient(baseURL: server.baseURL)
            for _ in 0..<10 {
                await expectCode(.badCredentials) { _ = try await anon.login(user: "bob", password: "guess", deviceName: "x") }
            }
            // Even the right password is refused while throttled.
            await expectCode(.tooManyAttempts) { _ = try await anon.login(user: "bob", password: "secret-pw", deviceName: "x") }
            // Other users are unaffected.
            _ = try await anon.login(user: "alice", password: "secret-pw", deviceName: "x")
        }
    }
}
