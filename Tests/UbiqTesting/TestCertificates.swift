import Crypto
import Foundation
import SwiftASN1
import UbiqHarness
import X509

extension TestCertificates {
    /// A fresh authority and server certificate (see ``TestCertificates``).
    public static func make(now: Date = Date()) throws -> TestCertificates {
        let caKey = P256.Signing.PrivateKey(), serverKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName { CommonName("Ubiquity test authority") }
        let serverName = try DistinguishedName { CommonName("localhost") }
        let ca = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 86_400, issuer: caName, subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(caKey))
        let server = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 86_400, issuer: caName, subject: serverName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(caKey))
        return TestCertificates(authorityPEM: try ca.serializeAsPEM().pemString, serverPEM: try server.serializeAsPEM().pemString,
                                serverKeyPEM: serverKey.pemRepresentation)
    }
}
