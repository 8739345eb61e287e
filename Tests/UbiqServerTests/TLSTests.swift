import AsyncHTTPClient
import Foundation
import NIOSSL
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqTesting
#if canImport(Glibc)
import Glibc
#endif

/// The server over HTTPS, with a certificate authority of the test's own: clients that trust
/// it get the API and the push channel; clients that do not are refused with a clear error.
@Suite("TLS")
struct TLSTests {
    @Test func theAPIAndThePushChannelWorkForAClientThatTrustsTheServer() async throws {
        let certs = try TestCertificates.make()
        let server = try await TestServer.start(tls: certs)
        try await server.user("alice")
        #expect(server.baseURL.hasPrefix("https://"))
        let (laptop, _) = try await server.device("alice", name: "laptop")
        let (phone, _) = try await server.device("alice", name: "phone")
        #expect(try await laptop.account().user == "alice")
        let inbox = PushInbox()
        let listening = Task { try await phone.listen { await inbox.add($0) } }
        defer { listening.cancel() }
        #expect(await inbox.wait { $0.kind == .hello } != nil, "the push channel opens over wss://")
        let committed = try await commitFile(laptop, "Documents/secret.txt", "over TLS")
        #expect(await inbox.wait { $0.kind == .changes } != nil, "a change is pushed over wss://")
        let seen = try await phone.changes(notes, after: 0).items
        #expect(seen.contains { $0.id == committed.item.id && $0.path.string == "Documents/secret.txt" })
        // By host name (checked against the certificate on both channels).
        var named = UbiqAPIClient(baseURL: "https://localhost:\(server.port)", trusting: certs.authorityPEM)
        named.token = phone.token
        #expect(try await named.account().user == "alice")
        let namedInbox = PushInbox()
        let namedListening = Task { try await named.listen { await namedInbox.add($0) } }
        defer { namedListening.cancel() }
        #expect(await namedInbox.wait { $0.kind == .hello } != nil, "the push channel opens by host name")
        // An IP address with the system's authorities: refused on the push channel, clearly.
        var system = UbiqAPIClient(baseURL: server.baseURL)
        system.token = phone.token
        let e = await #expect(throws: ClientError.self) { try await system.listen { _ in } }
        #expect(e?.message.contains("--ca-cert") == true, "\(e?.message ?? "")")
        await server.stop()
    }

    /// #23 row 11: servers with `--tls-cert` accepted TLS 1.0 and 1.1. A client that offers
    /// nothing newer is refused now; one offering 1.2 is served.
    @Test func tlsOlderThanOnePointTwoIsRefused() async throws {
        let certs = try TestCertificates.make()
        let server = try await TestServer.start(tls: certs)
        defer { Task { await server.stop() } }
        func health(maximum: TLSVersion) async throws -> Int {
            var tls = ServerTrust.tlsConfiguration(trusting: certs.authorityPEM)
            tls.minimumTLSVersion = .tlsv1
            tls.maximumTLSVersion = maximum
            // The connect timeout covers the TLS handshake: 2 s ran out on a busy CI box before the
            // server's refusal arrived. (Not a speed check: a refusal comes back at once.)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls, timeout: .init(connect: .seconds(30))))
            defer { _ = client.shutdown() }
            let response = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/v1/health"), timeout: .seconds(20))
            return Int(response.status.code)
        }
        for old in [TLSVersion.tlsv1, .tlsv11] {
            let e = await #expect(throws: (any Error).self, "\(old) was accepted") { _ = try await health(maximum: old) }
            #expect(String(describing: e).contains("PROTOCOL_VERSION"), "\(String(describing: e))")
        }
        #expect(try await health(maximum: .tlsv12) == 200)
        #expect(try await health(maximum: .tlsv13) == 200)
    }

    @Test func aClientThatDoesNotTrustTheServerIsRefusedWithAClearError() async throws {
        let certs = try TestCertificates.make(), stranger = try TestCertificates.make()
        let server = try await TestServer.start(tls: certs)
        try await server.user("alice")
        // The system's authorities, and another authority: the certificate is not trusted.
        for trust in [nil, stranger.authorityPEM] {
            let e = await #expect(throws: ClientError.self) {
                _ = try await UbiqAPIClient(baseURL: server.baseURL, trusting: trust).login(user: "alice", password: "secret-pw", deviceName: "x")
            }
            #expect(e?.code == .serverUnreachable)
            #expect(e?.message.contains("not trusted") == true && e?.message.contains("--ca-cert") == true, "\(e?.message ?? "")")
        }
        // Trusted, but asked for by a name the certificate does not carry.
        let wrongName = "https://127.0.0.2:\(server.port)"
        await #expect(throws: ClientError.self) {
            _ = try await UbiqAPIClient(baseURL: wrongName, trusting: certs.authorityPEM).login(user: "alice", password: "secret-pw", deviceName: "x")
        }
        // Plain HTTP to the TLS port fails (no hang), and the server goes on serving.
        let plain = "http://127.0.0.1:\(server.port)"
        await #expect(throws: ClientError.self) {
            _ = try await UbiqAPIClient(baseURL: plain, timeout: .seconds(20)).login(user: "alice", password: "secret-pw", deviceName: "x")
        }
        // A damaged trust (not PEM) trusts nothing.
        await #expect(throws: ClientError.self) {
            _ = try await UbiqAPIClient(baseURL: server.baseURL, trusting: "garbage").login(user: "alice", password: "secret-pw", deviceName: "x")
        }
        #expect(throws: ClientError.self) { _ = try ServerTrust.certificates(pem: "garbage") }
        let (c, _) = try await server.device("alice")
        #expect(try await c.account().user == "alice")
        await server.stop()
    }
}
