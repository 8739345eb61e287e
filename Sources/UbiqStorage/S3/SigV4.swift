import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// AWS Signature Version 4, the signing every S3-compatible store (AWS S3, Ceph RGW, MinIO)
/// asks of a request: a canonical form of the request is hashed, and that hash is signed with
/// a key derived from the secret, the day, the region and the service. Pure: the time is
/// passed in, nothing is sent. Checked against AWS's published examples (`SigV4Tests`).
///
/// `S3Client` signs every request with it (the chunk store on S3, `S3ChunkStore`).
public struct SigV4: Sendable {
    public struct Credentials: Sendable {
        public var accessKeyID: String
        public var secretAccessKey: String
        /// A temporary credential's token (`AWS_SESSION_TOKEN`), signed as `x-amz-security-token`.
        public var sessionToken: String?
        public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
            self.accessKeyID = accessKeyID; self.secretAccessKey = secretAccessKey; self.sessionToken = sessionToken
        }
    }

    public let credentials: Credentials
    public let region: String
    public let service: String

    public init(credentials: Credentials, region: String, service: String = "s3") {
        self.credentials = credentials; self.region = region; self.service = service
    }

    /// The hex SHA-256 of an empty payload.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// What signing a request gives: the headers to add to it (`x-amz-date`, the session
    /// token if any, `authorization`), and the intermediate forms (for tests and diagnostics).
    public struct Signed: Sendable {
        public var headers: [(name: String, value: String)]
        public var canonicalRequest: String
        public var stringToSign: String
        public var signature: String
        public var authorization: String { headers.first { $0.name == "authorization" }?.value ?? "" }
    }

    /// Signs a request. `path` is the URI path as sent (already percent-encoded, see
    /// `encodePath`); `query` holds the parameters decoded (they are encoded and sorted here);
    /// `headers` must include `host` (and, for S3, `x-amz-content-sha256`); `payloadHash` is the
    /// hex SHA-256 of the body (or `UNSIGNED-PAYLOAD`).
    public func sign(method: String, path: String, query: [(String, String)] = [], headers: [(String, String)],
                     payloadHash: String, at date: Date) -> Signed {
        let (amzDate, day) = Self.timestamps(date)
        var all = headers.map { (name: $0.0.lowercased(), value: Self.trimmed($0.1)) }
        all.append((name: "x-amz-date", value: amzDate))
        if let token = credentials.sessionToken { all.append((name: "x-amz-security-token", value: token)) }
        // Headers named twice are one header whose values are joined with commas, in order.
        var merged: [String: String] = [:]
        for h in all { merged[h.name] = merged[h.name].map { $0 + "," + h.value } ?? h.value }
        let names = merged.keys.sorted()
        let signedHeaders = names.joined(separator: ";")
        let canonicalHeaders = names.map { "\($0):\(merged[$0]!)\n" }.joined()
        let canonicalQuery = Self.canonicalQuery(query)
        let canonicalRequest = [method.uppercased(), path.isEmpty ? "/" : path, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash]
            .joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, Self.hex(SHA256.hash(data: Data(canonicalRequest.utf8)))].joined(separator: "\n")
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: signingKey(day: day)))
        let authorization = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        var out: [(name: String, value: String)] = [("x-amz-date", amzDate)]
        if let token = credentials.sessionToken { out.append(("x-amz-security-token", token)) }
        out.append(("authorization", authorization))
        return Signed(headers: out, canonicalRequest: canonicalRequest, stringToSign: stringToSign, signature: signature)
    }

    /// The query as signed: names and values encoded, sorted by name (then value), `&`-joined.
    static func canonicalQuery(_ query: [(String, String)]) -> String {
        var pairs: [(name: String, value: String)] = query.map { (encode($0.0, slash: true), encode($0.1, slash: true)) }
        pairs.sort { a, b in a.name == b.name ? a.value < b.value : a.name < b.name }
        return pairs.map { p in p.name + "=" + p.value }.joined(separator: "&")
    }

    /// The day's key: HMAC chained over the day, the region, the service and `aws4_request`.
    func signingKey(day: String) -> SymmetricKey {
        func mac(_ key: SymmetricKey, _ text: String) -> SymmetricKey {
            SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key)))
        }
        let start = SymmetricKey(data: Data(("AWS4" + credentials.secretAccessKey).utf8))
        return mac(mac(mac(mac(start, day), region), service), "aws4_request")
    }

    /// An object key as a URI path: each byte but the unreserved ones (`A-Z a-z 0-9 - _ . ~`)
    /// percent-encoded, `/` kept (S3 paths are encoded once).
    public static func encodePath(_ key: String) -> String { encode(key, slash: false) }

    /// RFC 3986 encoding as SigV4 wants it: uppercase hex; `/` encoded too when `slash`.
    static func encode(_ s: String, slash: Bool) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            case UInt8(ascii: "/") where !slash:
                out.append("/")
            default:
                out += "%" + String(b >> 4, radix: 16, uppercase: true) + String(b & 15, radix: 16, uppercase: true)
            }
        }
        return out
    }

    /// A header value as signed: leading and trailing blanks dropped, runs of blanks made one.
    static func trimmed(_ v: String) -> String {
        v.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }

    /// `20130524T000000Z` and `20130524`, in UTC.
    static func timestamps(_ date: Date) -> (String, String) {
        var t = time_t(date.timeIntervalSince1970.rounded(.down))
        var tm = tm()
        gmtime_r(&t, &tm)
        let day = String(format: "%04d%02d%02d", Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1, Int(tm.tm_mday))
        return (day + String(format: "T%02d%02d%02dZ", Int(tm.tm_hour), Int(tm.tm_min), Int(tm.tm_sec)), day)
    }

    static func hex<D: Sequence>(_ bytes: D) -> String where D.Element == UInt8 {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
