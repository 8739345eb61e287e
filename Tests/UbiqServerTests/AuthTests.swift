import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqTesting

@Suite("Accounts and tokens")
struct AuthTests {
    @Test func loginIssuesPerDeviceTokensThatCanBeRevoked() async throws {
        try await withServer { server in
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

    @Test func badCredentialsAreRefused() async throws {
        try await withServer { server in
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

    @Test func passwordsAreStoredOnlyAsSlowSaltedHashes() async throws {
        try await withServer { server in
            let account = try #require(try await server.services.metadata.account(named: "alice"))
            #expect(account.password.iterations >= 100_000)
            #expect(account.password.salt.count >= 16)
            #expect(!String(decoding: account.password.derived, as: UTF8.self).contains("secret-pw"))
            let db = try Data(contentsOf: server.directory.url.appendingPathComponent("metadata.sqlite"))
            #expect(db.range(of: Data("secret-pw".utf8)) == nil)
        }
    }

    @Test func repeatedFailuresAreThrottled() async throws {
        try await withServer { server in
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
