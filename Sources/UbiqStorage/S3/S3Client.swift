import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import UbiqCore

/// The few S3 operations the server's object storage needs, on one bucket of an
/// S3-compatible store (AWS S3, Ceph RGW, MinIO), path-style (`endpoint/bucket/key`), each
/// request signed with `SigV4` over its real payload hash. Server errors and `SlowDown` are
/// tried again with backoff; a missing object is `nil`, never an error. `S3ChunkStore` is
/// built on it.
public struct S3Client: Sendable {
    let http: HTTPClient
    let signer: SigV4
    let base: URL
    public let bucket: String
    let now: @Sendable () -> Date
    /// How long one try may take, plus a second a MiB of body (a store that does not answer, or
    /// cannot be reached, costs this per try: the HTTP client keeps trying to connect until then).
    let timeout: Duration
    /// Tries per request (the first and the retries).
    static let attempts = 4

    /// `endpoint`: `http://127.0.0.1:7480` (scheme, host and port; no path).
    public init(endpoint: String, bucket: String, region: String, credentials: SigV4.Credentials,
                http: HTTPClient = .shared, timeout: Duration = .seconds(30), now: @escaping @Sendable () -> Date = { Date() }) throws {
        guard let url = URL(string: endpoint), let scheme = url.scheme, scheme == "http" || scheme == "https", url.host != nil,
              url.path.isEmpty || url.path == "/" else {
            throw StorageError(.invalidRequest, "'\(endpoint)' is not an S3 endpoint (http[s]://HOST[:PORT])")
        }
        guard (3...63).contains(bucket.count), bucket.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" || $0 == "." }) else {
            throw StorageError(.invalidRequest, "'\(bucket)' is not a bucket name (3-63 of a-z, 0-9, '-', '.')")
        }
        self.base = url
        self.bucket = bucket
        self.signer = SigV4(credentials: credentials, region: region)
        self.http = http
        self.timeout = timeout
        self.now = now
    }

    /// What a request came back with.
    struct Answer {
        var status: Int
        var body: [UInt8]
    }

    /// Creates the bucket unless it is there; one clear error when it cannot be.
    public func ensureBucket() async throws {
        let head = try await send(.HEAD, key: nil)
        if head.status == 200 { return }
        guard head.status == 404 else { throw Self.failure("cannot reach bucket \(bucket)", head) }
        let made = try await send(.PUT, key: nil)
        guard made.status == 200 || Self.code(made) == "BucketAlreadyOwnedByYou" else { throw Self.failure("cannot create bucket \(bucket)", made) }
    }

    /// Stores an object; returns once the store has acknowledged it.
    public func put(_ key: String, _ bytes: [UInt8]) async throws {
        let a = try await send(.PUT, key: key, body: bytes)
        guard a.status == 200 else { throw Self.failure("cannot store \(key)", a) }
    }

    /// An object's bytes (a byte range of it), or nil when there is no such object.
    public func get(_ key: String, range: Range<Int>? = nil, limit: Int = 64 << 20) async throws -> [UInt8]? {
        var headers: [(String, String)] = []
        if let r = range {
            guard !r.isEmpty else { return [] }
            headers.append(("range", "bytes=\(r.lowerBound)-\(r.upperBound - 1)"))
        }
        let a = try await send(.GET, key: key, headers: headers, limit: min(limit, range?.count ?? limit))
        if a.status == 404 { return nil }
        guard a.status == 200 || a.status == 206 else { throw Self.failure("cannot read \(key)", a) }
        return a.body
    }

    /// Whether an object is there.
    public func exists(_ key: String) async throws -> Bool {
        let a = try await send(.HEAD, key: key)
        if a.status == 404 { return false }
        guard a.status == 200 else { throw Self.failure("cannot look up \(key)", a) }
        return true
    }

    /// Removes an object (gone already is fine).
    public func delete(_ key: String) async throws {
        let a = try await send(.DELETE, key: key)
        guard a.status == 204 || a.status == 200 || a.status == 404 else { throw Self.failure("cannot remove \(key)", a) }
    }

    /// An object as a listing shows it.
    public struct Listed: Sendable, Equatable {
        public let key: String
        public let size: Int64
        public let modified: Date?
    }

    /// Every object whose key starts with `prefix` (ListObjectsV2, a thousand a request).
    public func list(prefix: String) async throws -> [Listed] {
        var out: [Listed] = []
        var token: String?
        repeat {
            var query = [("list-type", "2"), ("prefix", prefix), ("max-keys", "1000")]
            if let token { query.append(("continuation-token", token)) }
            let a = try await send(.GET, key: nil, query: query, limit: 4 << 20)
            guard a.status == 200 else { throw Self.failure("cannot list \(bucket)", a) }
            let page: S3Listing.Page
            do { page = try S3Listing.parse(a.body) } catch { throw StorageError(.storageFailure, "cannot list \(bucket): \(error)") }
            out += page.objects
            token = page.truncated ? page.next : nil
            guard page.truncated == false || token != nil else { throw StorageError(.storageFailure, "the object store's listing of \(bucket) is cut short with no way on") }
        } while token != nil
        return out
    }

    /// Signs and sends one request, trying again with backoff on server errors (5xx, including
    /// `SlowDown`) and on connection failures.
    func send(_ method: HTTPMethod, key: String?, query: [(String, String)] = [], headers extra: [(String, String)] = [], body: [UInt8] = [],
              limit: Int = 1 << 20) async throws -> Answer {
        let path = "/" + bucket + (key.map { "/" + SigV4.encodePath($0) } ?? "")
        let queryText = query.isEmpty ? "" : "?" + SigV4.canonicalQuery(query)
        let payloadHash = body.isEmpty ? SigV4.emptyPayloadHash : SigV4.hex(SHA256.hash(data: body))
        let hostHeader = base.port.map { "\(base.host!):\($0)" } ?? base.host!
        var delay: Duration = .milliseconds(100)
        for attempt in 1...Self.attempts {
            var headers = [("host", hostHeader), ("x-amz-content-sha256", payloadHash)] + extra
            let signed = signer.sign(method: method.rawValue, path: path, query: query, headers: headers, payloadHash: payloadHash, at: now())
            headers += signed.headers.map { ($0.name, $0.value) }
            var request = HTTPClientRequest(url: base.absoluteString.trimmingSuffix("/") + path + queryText)
            request.method = method
            for (n, v) in headers { request.headers.add(name: n, value: v) }
            if !body.isEmpty {
                request.body = .bytes(ByteBuffer(bytes: body))
                request.headers.replaceOrAdd(name: "content-length", value: String(body.count))
            }
            do {
                let tryFor: Duration = timeout + Duration.seconds(body.count >> 20)
                let nanos = tryFor.components.seconds * 1_000_000_000 + tryFor.components.attoseconds / 1_000_000_000
                let response = try await http.execute(request, timeout: TimeAmount.nanoseconds(nanos))
                let bytes = method == .HEAD ? ByteBuffer() : try await response.body.collect(upTo: max(limit, 64 << 10))
                let answer = Answer(status: Int(response.status.code), body: Array(bytes.readableBytesView))
                if answer.status >= 500 && attempt < Self.attempts {
                    try await Task.sleep(for: delay)
                    delay *= 2
                    continue
                }
                return answer
            } catch let e as StorageError {
                throw e
            } catch where attempt < Self.attempts && !Task.isCancelled {
                try await Task.sleep(for: delay)
                delay *= 2
            } catch {
                throw StorageError(.storageFailure, "object store \(base.absoluteString): \(error)")
            }
        }
        throw StorageError(.storageFailure, "object store \(base.absoluteString): no answer")
    }

    /// The S3 error code in an error answer's XML (`<Code>NoSuchKey</Code>`), if any.
    static func code(_ a: Answer) -> String? { a.body.isEmpty ? nil : S3Listing.errorCode(a.body) }

    static func failure(_ what: String, _ a: Answer) -> StorageError {
        StorageError(.storageFailure, "\(what): the object store answered \(a.status)\(code(a).map { " \($0)" } ?? "")")
    }
}

extension String {
    /// The string without one trailing `suffix`.
    func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}
