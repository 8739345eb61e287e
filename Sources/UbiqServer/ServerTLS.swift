import Foundation
import HummingbirdTLS
import UbiqCore

/// The server's TLS identity: a certificate chain and its private key, from PEM.
public enum ServerTLS {
    /// Reads `certFile` (the server's certificate first, then any intermediates) and `keyFile`;
    /// a clear error names the file that could not be used.
    public static func load(certFile: String, keyFile: String) throws -> TLSConfiguration {
        guard let cert = FileManager.default.contents(atPath: certFile) else { throw CoreError(.notFound, "cannot read the TLS certificate \(certFile)") }
        guard let key = FileManager.default.contents(atPath: keyFile) else { throw CoreError(.notFound, "cannot read the TLS key \(keyFile)") }
        return try configuration(certificatePEM: String(decoding: cert, as: UTF8.self), keyPEM: String(decoding: key, as: UTF8.self),
                                 names: (certFile, keyFile))
    }

    /// The TLS settings for a certificate chain and key given as PEM text.
    public static func configuration(certificatePEM: String, keyPEM: String, names: (cert: String, key: String) = ("certificate", "key")) throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8)) } catch {
            throw CoreError(.invalidValue, "\(names.cert) is not a PEM certificate (\(error))")
        }
        guard !chain.isEmpty else { throw CoreError(.invalidValue, "\(names.cert) holds no certificate (expected PEM: -----BEGIN CERTIFICATE-----)") }
        let key: NIOSSLPrivateKey
        do { key = try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem) } catch {
            throw CoreError(.invalidValue, "\(names.key) is not a PEM private key (\(error))")
        }
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        // A closing connection waits this long for the client's own TLS close; clients that
        // just drop the connection would otherwise hold a server's stop for 5 s each.
        tls.shutdownTimeout = .seconds(1)
        // TLS 1.0 and 1.1 are broken (#23 row 11): a client offering only those is refused.
        tls.minimumTLSVersion = .tlsv12
        return tls
    }
}
