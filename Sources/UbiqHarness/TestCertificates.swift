import Foundation

/// A certificate authority of its own and a server certificate it signed for `127.0.0.1` and
/// `localhost`, made fresh for a test (valid from an hour ago for a day), as PEM.
public struct TestCertificates: Sendable {
    /// The authority's certificate: what a client must trust.
    public let authorityPEM: String
    /// The server's certificate and its private key.
    public let serverPEM: String
    public let serverKeyPEM: String

    public init(authorityPEM: String, serverPEM: String, serverKeyPEM: String) {
        self.authorityPEM = authorityPEM; self.serverPEM = serverPEM; self.serverKeyPEM = serverKeyPEM
    }
}
