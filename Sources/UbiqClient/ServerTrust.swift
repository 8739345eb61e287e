import AsyncHTTPClient
import Foundation
import NIOSSL

/// Which certificates an `https://` server may present. By default the system's trusted
/// certificate authorities; a device that logged in with `--ca-cert FILE` trusts the
/// certificates of that file instead (a server with its own CA or a self-signed certificate).
/// The host name (or IP address) is checked against the certificate, except on the push channel
/// to an IP address (see `pushTLS`).
public enum ServerTrust {
    /// The certificates of a PEM text; throws a clear error if it holds none or is malformed.
    public static func certificates(pem: String) throws -> [NIOSSLCertificate] {
        let certs: [NIOSSLCertificate]
        do { certs = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)) } catch {
            throw ClientError(.invalidRequest, "not a PEM certificate file (\(error))")
        }
        guard !certs.isEmpty else { throw ClientError(.invalidRequest, "no certificate in the file (expected PEM: -----BEGIN CERTIFICATE-----)") }
        return certs
    }

    /// The TLS settings of a client that trusts `pem` (nil: the system's authorities). A PEM
    /// that cannot be read (a damaged config) trusts nothing, so connections fail verification
    /// instead of silently trusting more.
    public static func tlsConfiguration(trusting pem: String?) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12  // never downgraded to TLS 1.0 or 1.1
        if let pem { tls.trustRoots = .certificates((try? certificates(pem: pem)) ?? []) }
        return tls
    }

    /// Whether `host` (as in a URL, IPv6 in brackets) is an IP address rather than a name.
    public static func isIPAddress(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, bare, &v4) == 1 || inet_pton(AF_INET6, bare, &v6) == 1
    }

    /// The TLS settings of the push channel to `host`. Its WebSocket client always sends the
    /// host as the TLS server name, which cannot be an IP address, so the certificate cannot be
    /// checked against an IP there: a server addressed by IP is accepted on the push channel
    /// only with certificates of the user's own (`--ca-cert`), and then by those alone (the
    /// API requests, over another client, still check the IP against the certificate).
    static func pushTLS(host: String, trusting pem: String?) throws -> TLSConfiguration {
        var tls = tlsConfiguration(trusting: pem)
        if isIPAddress(host) {
            guard pem != nil else { throw ClientError(.invalidRequest, ipNeedsOwnCertificate) }
            tls.certificateVerification = .noHostnameVerification
        }
        return tls
    }

    /// Why an `https://` URL with an IP address needs `--ca-cert`.
    public static let ipNeedsOwnCertificate =
        "an https:// server addressed by its IP address needs its own certificate (or its authority's) given with --ca-cert FILE; or use its host name"

    private static let lock = NSLock()
    nonisolated(unsafe) private static var clients: [String: HTTPClient] = [:]

    /// One HTTP client per trust (they live as long as the process, like `sharedHTTP`).
    public static func httpClient(trusting pem: String?) -> HTTPClient {
        guard let pem else { return UbiqAPIClient.sharedHTTP }
        return lock.withLock {
            if let c = clients[pem] { return c }
            var config = UbiqAPIClient.httpConfiguration()
            config.tlsConfiguration = tlsConfiguration(trusting: pem)
            let c = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
            clients[pem] = c
            return c
        }
    }
}
