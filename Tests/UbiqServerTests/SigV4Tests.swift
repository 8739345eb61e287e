import Crypto
import Foundation
import Testing
import UbiqStorage
import UbiqTesting

/// AWS Signature Version 4 against AWS's published examples: the SigV4 test suite's
/// `get-vanilla` and `get-vanilla-query-order-key-case` (service `service`), and the S3
/// documentation's GET object with a range, PUT object with a key that needs encoding, GET
/// bucket lifecycle and list objects (`examplebucket`, 2013-05-24).
@Suite("AWS Signature Version 4")
struct SigV4Tests {
    static let suite = SigV4(credentials: .init(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
                             region: "us-east-1", service: "service")
    static let s3 = SigV4(credentials: .init(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
                          region: "us-east-1")
    static let suiteDate = Date(timeIntervalSince1970: 1_440_938_160)  // 2015-08-30T12:36:00Z
    static let s3Date = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z
    static let s3Host = ("host", "examplebucket.s3.amazonaws.com")
    static let empty = SigV4.emptyPayloadHash

    @Test func theTestSuitesVanillaRequests() {
        let vanilla = Self.suite.sign(method: "GET", path: "/", headers: [("Host", "example.amazonaws.com")], payloadHash: Self.empty, at: Self.suiteDate)
        #expect(vanilla.authorization == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
        #expect(vanilla.headers.first?.name == "x-amz-date" && vanilla.headers.first?.value == "20150830T123600Z")
        // Query parameters are sorted by name before signing.
        let ordered = Self.suite.sign(method: "GET", path: "/", query: [("Param2", "value2"), ("Param1", "value1")],
                                      headers: [("Host", "example.amazonaws.com")], payloadHash: Self.empty, at: Self.suiteDate)
        #expect(ordered.signature == "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500")
    }

    @Test func theS3DocumentationsExamples() {
        let get = Self.s3.sign(method: "GET", path: "/test.txt", headers: [Self.s3Host, ("Range", "bytes=0-9"), ("x-amz-content-sha256", Self.empty)],
                               payloadHash: Self.empty, at: Self.s3Date)
        #expect(get.stringToSign.hasSuffix("7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972"), "\(get.canonicalRequest)")
        #expect(get.authorization == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        // A key that needs encoding (`$`), with a body.
        let body = SHA256.hash(data: Data("Welcome to Amazon S3.".utf8)).map { String(format: "%02x", $0) }.joined()
        #expect(body == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        let put = Self.s3.sign(method: "PUT", path: SigV4.encodePath("/test$file.text"),
                               headers: [("Date", "Fri, 24 May 2013 00:00:00 GMT"), Self.s3Host, ("x-amz-content-sha256", body),
                                         ("x-amz-storage-class", "REDUCED_REDUNDANCY")], payloadHash: body, at: Self.s3Date)
        #expect(put.canonicalRequest.hasPrefix("PUT\n/test%24file.text\n"))
        #expect(put.signature == "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
        // A parameter without a value, and parameters sorted.
        let lifecycle = Self.s3.sign(method: "GET", path: "/", query: [("lifecycle", "")], headers: [Self.s3Host, ("x-amz-content-sha256", Self.empty)],
                                     payloadHash: Self.empty, at: Self.s3Date)
        #expect(lifecycle.signature == "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
        let list = Self.s3.sign(method: "GET", path: "/", query: [("prefix", "J"), ("max-keys", "2")], headers: [Self.s3Host, ("x-amz-content-sha256", Self.empty)],
                                payloadHash: Self.empty, at: Self.s3Date)
        #expect(list.signature == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
    }

    /// A temporary credential's token is sent and signed; blanks in header values fold.
    @Test func aSessionTokenIsSignedAndHeaderBlanksFold() {
        var c = Self.s3.credentials
        c.sessionToken = "token/with+chars"
        let signer = SigV4(credentials: c, region: "us-east-1")
        let s = signer.sign(method: "GET", path: "/", headers: [Self.s3Host, ("X-Custom", "  a   b  ")], payloadHash: Self.empty, at: Self.s3Date)
        #expect(s.headers.contains { $0.name == "x-amz-security-token" && $0.value == "token/with+chars" })
        #expect(s.authorization.contains("SignedHeaders=host;x-amz-date;x-amz-security-token;x-custom"))
        #expect(s.canonicalRequest.contains("\nx-custom:a b\n"))
        #expect(s.signature != Self.s3.sign(method: "GET", path: "/", headers: [Self.s3Host, ("X-Custom", "a b")], payloadHash: Self.empty, at: Self.s3Date).signature)
    }

    /// Seeded: any key's path encoding keeps `/` and the unreserved bytes, escapes every
    /// other byte as `%XX` (uppercase), and decodes back to the key.
    @Test func pathEncodingRoundTrips() {
        var rng = SeededRandom.forTest("sigv4-encode")
        let alphabet = Array("abcXYZ019-_.~/ $&+=?#%é日🙂\u{7}")
        for _ in 0..<2_000 {
            let key = String((0..<Int.random(in: 0...24, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            let encoded = SigV4.encodePath(key)
            #expect(encoded.removingPercentEncoding == key, "\(key) → \(encoded)")
            #expect(encoded.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.~/%".contains($0)) }, "\(encoded)")
            let escapes = encoded.split(separator: "%", omittingEmptySubsequences: false).dropFirst()
            #expect(escapes.allSatisfy { $0.prefix(2).count == 2 && $0.prefix(2).allSatisfy { "0123456789ABCDEF".contains($0) } }, "each % is two uppercase hex digits: \(encoded)")
        }
    }
}
