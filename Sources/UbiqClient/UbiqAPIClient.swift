import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import UbiqCore
import UbiqProtocol
import UbiqTransport

/// A client of the server's HTTP API (one per device session). Every method maps a route of
/// `Sources/UbiqServer/API.md`.
public struct UbiqAPIClient: Sendable {
    public let baseURL: String
    public var token: String?
    /// The certificates an `https://` server may present (PEM); nil: the system's authorities.
    public let trusted: String?
    let http: HTTPClient
    let timeout: TimeAmount

    /// - Parameters:
    ///   - baseURL: e.g. `http://127.0.0.1:8737` or `https://sync.example.org` (a trailing `/` is ignored).
    ///   - trusting: PEM certificates to trust instead of the system's authorities (see `ServerTrust`).
    public init(baseURL: String, token: String? = nil, trusting: String? = nil, http: HTTPClient? = nil, timeout: TimeAmount = .seconds(60)) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.token = token
        self.trusted = trusting
        self.http = http ?? ServerTrust.httpClient(trusting: trusting)
        self.timeout = timeout
    }

    /// One HTTP client per process. A refused connection fails at once (the engine has its own
    /// backoff and reports `offline`) instead of being retried until the request deadline.
    public static let sharedHTTP = HTTPClient(eventLoopGroupProvider: .singleton, configuration: httpConfiguration())

    /// The settings every client of ours shares (`ServerTrust` adds its certificates).
    /// `readTimeout`: the longest silence once a request is sent — a request's deadline covers
    /// only its answer's head, so a body that stalls half-way would otherwise be waited for
    /// for ever (and with it the engine's pass and its stop).
    public static func httpConfiguration(readTimeout: TimeAmount = .seconds(60)) -> HTTPClient.Configuration {
        var config = HTTPClient.Configuration()
        config.timeout.read = readTimeout
        config.connectionPool.retryConnectionEstablishment = false
        // Idle connections are closed by us well before the server's idle timeout (120 s).
        config.connectionPool.idleTimeout = .seconds(60)
        config.timeout.connect = .seconds(5)
        config.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 8
        return config
    }

    // MARK: transport

    /// Why a connection failed, in a user's words.
    static func reason(_ error: Error) -> String {
        let text = "\(error)"
        if text.contains("refused") { return "connection refused" }
        if text.contains("imeout") || text.contains("imedOut") { return "timed out" }
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate") || text.contains("Certificate") || text.contains("hostname") {
            return "its TLS certificate is not trusted (\(text)); if the server uses its own certificate, log in with --ca-cert FILE"
        }
        if text.contains("handshake") || text.contains("SSL") || text.contains("TLS") { return "the TLS handshake failed (\(text)); is it an https:// server?" }
        return text
    }

    func send(_ method: HTTPMethod, _ path: String, body: [UInt8]? = nil, contentType: String = "application/json",
              limit: Int = 256 << 20) async throws -> (status: Int, body: ByteBuffer) {
        try await send(method, path, buffer: body.map { ByteBuffer(bytes: $0) }, contentType: contentType, limit: limit)
    }

    func send(_ method: HTTPMethod, _ path: String, buffer body: ByteBuffer?, contentType: String = "application/json",
              limit: Int = 256 << 20) async throws -> (status: Int, body: ByteBuffer) {
        var req = HTTPClientRequest(url: baseURL + path)
        req.method = method
        if let token { req.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            req.headers.add(name: "Content-Type", value: contentType)
            req.body = .bytes(body)
        }
        let response: HTTPClientResponse
        do {
            response = try await http.execute(req, timeout: timeout)
        } catch {
            throw ClientError(.serverUnreachable, "cannot reach \(baseURL): \(Self.reason(error))")
        }
        let buffer: ByteBuffer
        do { buffer = try await Self.collect(response, upTo: limit) } catch {
            throw ClientError(.badResponse, "response from \(baseURL) broke off or was too large: \(error)")
        }
        let status = Int(response.status.code)
        if status >= 400 {
            if let err = try? WireCoding.decode(APIErrorBody.self, from: Data(buffer.readableBytesView)) {
                throw ClientError(err.error.code, err.error.message, status: status, missing: err.missing ?? [], item: err.error.item)
            }
            throw ClientError(status >= 500 ? .internalError : .invalidRequest, "server answered \(status)", status: status)
        }
        return (status, buffer)
    }

    /// The whole body of `response`. A large one goes into one buffer sized from its
    /// Content-Length: collecting it by doubling would copy it several times over and, past
    /// 16 MiB, map fresh memory for every answer.
    static func collect(_ response: HTTPClientResponse, upTo limit: Int) async throws -> ByteBuffer {
        guard let length = response.headers.first(name: "content-length").flatMap(Int.init), length >= 64 << 10 else {
            return try await response.body.collect(upTo: limit)
        }
        guard length <= limit else { throw ClientError(.badResponse, "an answer of \(length) bytes is over the limit of \(limit)") }
        var out = ByteBufferAllocator.transfer.buffer(capacity: length)
        for try await var part in response.body {
            guard out.readableBytes + part.readableBytes <= limit else { throw ClientError(.badResponse, "an answer ran over the limit of \(limit) bytes") }
            out.writeBuffer(&part)
        }
        return out
    }

    func call<R: Decodable>(_ method: HTTPMethod, _ path: String, _ body: (some Encodable)?, as: R.Type) async throws -> R {
        let data = try body.map { try [UInt8](WireCoding.encode($0)) }
        let (_, buf) = try await send(method, path, body: data)
        do { return try WireCoding.decode(R.self, from: Data(buf.readableBytesView)) } catch {
            throw ClientError(.badResponse, "unexpected response to \(method) \(path): \(error)")
        }
    }

    func get<R: Decodable>(_ path: String, as: R.Type) async throws -> R {
        try await call(.GET, path, Optional<Int>.none, as: R.self)
    }

    static func escape(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? s
    }

    func containerPath(_ c: ContainerID) -> String { "/v1/containers/\(Self.escape(c.string))" }

    // MARK: account

    /// Logs in and returns a client carrying the new token.
    public func login(user: String, password: String, deviceName: String, deviceID: DeviceID? = nil) async throws -> (UbiqAPIClient, LoginResponse) {
        let r = try await call(.POST, "/v1/login", LoginRequest(user: user, password: password, deviceName: deviceName, deviceID: deviceID), as: LoginResponse.self)
        var c = self
        c.token = r.token
        return (c, r)
    }

    /// Revokes this client's token, or every token of `device`.
    public func revoke(device: DeviceID? = nil) async throws {
        _ = try await send(.POST, "/v1/tokens/revoke", body: try [UInt8](WireCoding.encode(RevokeRequest(deviceID: device))))
    }

    public func account() async throws -> AccountInfo { try await get("/v1/account", as: AccountInfo.self) }

    /// The account's containers that hold items or settings.
    public func accountContainers() async throws -> [String] { try await get("/v1/account/containers", as: AccountContainersResponse.self).containers }

    /// The account's sealed keys by name (empty for a plain account).
    public func accountKeys() async throws -> [String: String] { try await get("/v1/account/keys", as: AccountKeysResponse.self).keys }

    /// Keeps a sealed key; `path_exists` when one of that name is kept and `replace` is false;
    /// with `expecting`, only in place of that value (`item_changed` when another is there).
    public func putAccountKey(name: String, value: String, replace: Bool, expecting: String? = nil) async throws {
        let body = AccountKeyRequest(value: value, replace: replace, expecting: expecting)
        _ = try await send(.PUT, "/v1/account/keys/\(name)", body: try [UInt8](WireCoding.encode(body)))
    }

    /// Removes a sealed key (`not_found` when there is none).
    public func deleteAccountKey(name: String) async throws {
        _ = try await send(.DELETE, "/v1/account/keys/\(name)")
    }

    /// The account's devices (revoked ones too, signed out).
    public func devices() async throws -> [DeviceInfo] { try await get("/v1/devices", as: DevicesResponse.self).devices }

    /// A peer ticket for `request`'s containers, with the account's devices that serve chunks
    /// on their LANs (#40; `POST /v1/peers/ticket`).
    public func peerTicket(_ request: PeerTicketRequest) async throws -> PeerTicketResponse {
        try await call(.POST, "/v1/peers/ticket", request, as: PeerTicketResponse.self)
    }

    // MARK: chunks

    public func missingChunks(_ hashes: [ContentHash]) async throws -> [ContentHash] {
        try await call(.POST, "/v1/chunks/missing", MissingChunksRequest(hashes: hashes), as: MissingChunksResponse.self).missing
    }

    public func uploadChunk(_ hash: ContentHash, _ bytes: [UInt8]) async throws {
        _ = try await send(.PUT, "/v1/chunks/\(hash.hex)", body: bytes, contentType: "application/octet-stream")
    }

    /// Downloads a chunk and verifies it against its hash.
    public func downloadChunk(_ hash: ContentHash) async throws -> [UInt8] {
        let (_, buf) = try await send(.GET, "/v1/chunks/\(hash.hex)", limit: WireLimits.maxChunkBody)
        let bytes = Array(buf.readableBytesView)
        guard ContentHash.of(bytes) == hash else { throw ClientError(.hashMismatch, "chunk \(hash) arrived corrupt") }
        return bytes
    }

    /// Uploads several chunks in one request (`ChunkFrames`; together at most
    /// `WireLimits.maxChunkBatchBody` bytes and `maxChunksPerBatch` chunks).
    public func uploadChunks(_ chunks: [[UInt8]]) async throws {
        guard !chunks.isEmpty else { return }
        _ = try await send(.POST, "/v1/chunks", body: ChunkFrames.encode(chunks), contentType: "application/octet-stream")
    }

    /// Uploads several chunks in one request, each with the hash it should have: the server
    /// stores none of them if one does not match (`hash_mismatch`).
    public func uploadChunks(named chunks: [(ContentHash, [UInt8])]) async throws {
        guard !chunks.isEmpty else { return }
        _ = try await send(.POST, "/v1/chunks", body: NamedChunkFrames.encode(chunks), contentType: NamedChunkFrames.contentType)
    }

    /// Uploads named chunks (`NamedChunkFrames`) whose bytes `fill` writes straight into the
    /// request body: `fill(i, buffer)` must fill `buffer` (exactly `chunks[i].size` bytes) with
    /// chunk `i`, e.g. by reading it from a file, so the bytes are copied once on their way out.
    public func uploadChunks(named chunks: [(hash: ContentHash, size: Int)],
                             fill: (Int, UnsafeMutableRawBufferPointer) throws -> Void) async throws {
        guard !chunks.isEmpty else { return }
        var body = ByteBufferAllocator.transfer.buffer(capacity: chunks.reduce(0) { $0 + 68 + $1.size })
        for (i, c) in chunks.enumerated() {
            c.hash.withHex { _ = body.writeBytes($0) }
            body.writeInteger(UInt32(c.size), endianness: .big)
            try body.writeWithUnsafeMutableBytes(minimumWritableBytes: c.size) { raw in
                try fill(i, UnsafeMutableRawBufferPointer(rebasing: raw[0..<c.size]))
                return c.size
            }
        }
        _ = try await send(.POST, "/v1/chunks", buffer: body, contentType: NamedChunkFrames.contentType)
    }

    /// Downloads several chunks in one request, in order, each verified against its hash.
    /// With `waitSeconds`, chunks still being uploaded by another device are waited for (see
    /// `FetchChunksRequest`).
    public func downloadChunks(_ hashes: [ContentHash], waitSeconds: Int? = nil) async throws -> [[UInt8]] {
        let got = try await fetchChunks(hashes, waitSeconds: waitSeconds)
        return (0..<got.count).map { got.bytes($0) }
    }

    /// Like `downloadChunks`, but the chunks stay where they arrived (one buffer), verified.
    public func fetchChunks(_ hashes: [ContentHash], waitSeconds: Int? = nil) async throws -> FetchedChunks {
        guard !hashes.isEmpty else { return FetchedChunks(buffer: ByteBuffer(), ranges: []) }
        let (_, buf) = try await send(.POST, "/v1/chunks/fetch", body: try [UInt8](WireCoding.encode(FetchChunksRequest(hashes: hashes, waitSeconds: waitSeconds))),
                                      limit: WireLimits.maxChunkBatchBody + 4 * WireLimits.maxChunksPerBatch)
        let view = buf.readableBytesView
        guard let ranges = ChunkFrames.ranges(view), ranges.count == hashes.count else {
            throw ClientError(.badResponse, "a chunk batch from \(baseURL) was malformed")
        }
        let got = FetchedChunks(buffer: buf, ranges: ranges.map { $0.lowerBound - view.startIndex..<$0.upperBound - view.startIndex })
        for (i, h) in hashes.enumerated() where got.withBytes(i, { ContentHash.of(buffer: $0) }) != h {
            throw ClientError(.hashMismatch, "chunk \(h) arrived corrupt")
        }
        return got
    }

    // MARK: items

    /// Several commits in one request and one server transaction; answers in order.
    public func commitMany(_ container: ContainerID, _ requests: [CommitRequest]) async throws -> [CommitBatchResult] {
        let r = try await call(.POST, containerPath(container) + "/commits", CommitBatchRequest(commits: requests), as: CommitBatchResponse.self)
        guard r.results.count == requests.count else { throw ClientError(.badResponse, "a commit batch was answered with \(r.results.count) results for \(requests.count)") }
        // A file commit's version is left out when it is the item's current version.
        return zip(requests, r.results).map { request, result in
            guard request.kind == .file, var response = result.response, response.version == nil else { return result }
            response.version = response.item.current
            return CommitBatchResult(response: response, error: result.error)
        }
    }

    /// Several versions' manifests in one request, in order.
    public func manifests(_ container: ContainerID, versions: [VersionID]) async throws -> [Manifest] {
        let r = try await call(.POST, containerPath(container) + "/manifests", ManifestsRequest(versions: versions), as: ManifestsResponse.self)
        guard r.manifests.count == versions.count else { throw ClientError(.badResponse, "a manifests query was answered with \(r.manifests.count) for \(versions.count)") }
        return r.manifests
    }

    public func commit(_ container: ContainerID, _ request: CommitRequest) async throws -> CommitResponse {
        try await call(.POST, containerPath(container) + "/commit", request, as: CommitResponse.self)
    }

    public func complete(_ container: ContainerID, version: VersionID) async throws -> ItemRecord {
        try await call(.POST, containerPath(container) + "/versions/\(version)/complete", Optional<Int>.none, as: ItemRecord.self)
    }

    public func manifest(_ container: ContainerID, version: VersionID) async throws -> Manifest {
        try await get(containerPath(container) + "/versions/\(version)/manifest", as: Manifest.self)
    }

    /// A version's manifest as a difference from `base` (both of this container).
    public func manifestDelta(_ container: ContainerID, version: VersionID, base: VersionID) async throws -> ManifestDelta {
        try await get(containerPath(container) + "/versions/\(version)/delta?base=\(base)", as: ManifestDelta.self)
    }

    public func move(_ container: ContainerID, item: ItemID, to path: RelativePath) async throws -> ItemRecord {
        try await call(.POST, containerPath(container) + "/items/\(item)/move", MoveRequest(path: path), as: ItemRecord.self)
    }

    /// A sync engine's move: only if the live folder at the new parent path is `parent`
    /// (`item_changed` otherwise).
    public func move(_ container: ContainerID, item: ItemID, to path: RelativePath, into parent: ItemID) async throws -> ItemRecord {
        try await call(.POST, containerPath(container) + "/items/\(item)/move?parent=\(parent)", MoveRequest(path: path), as: ItemRecord.self)
    }

    public func delete(_ container: ContainerID, item: ItemID) async throws -> ItemRecord {
        try await call(.POST, containerPath(container) + "/items/\(item)/delete", Optional<Int>.none, as: ItemRecord.self)
    }

    /// A sync engine's delete: only if neither the item nor anything under it changed after
    /// change `since` (the device's cursor); `item_changed` otherwise.
    public func delete(_ container: ContainerID, item: ItemID, unchangedSince since: Int64) async throws -> ItemRecord {
        try await call(.POST, containerPath(container) + "/items/\(item)/delete?since=\(since)", Optional<Int>.none, as: ItemRecord.self)
    }

    public func restore(_ container: ContainerID, item: ItemID) async throws -> ItemRecord {
        try await call(.POST, containerPath(container) + "/items/\(item)/restore", Optional<Int>.none, as: ItemRecord.self)
    }

    public func versions(_ container: ContainerID, item: ItemID) async throws -> VersionsResponse {
        try await get(containerPath(container) + "/items/\(item)/versions", as: VersionsResponse.self)
    }

    public func resolve(_ container: ContainerID, item: ItemID, keep: VersionID) async throws -> ItemRecord {
        try await call(.POST, containerPath(container) + "/items/\(item)/resolve", ResolveRequest(keep: keep), as: ItemRecord.self)
    }

    public func changes(_ container: ContainerID, after cursor: Int64, limit: Int = WireLimits.defaultPage) async throws -> ChangesResponse {
        try await get(containerPath(container) + "/changes?cursor=\(cursor)&limit=\(limit)", as: ChangesResponse.self)
    }

    public func trash(_ container: ContainerID) async throws -> TrashResponse {
        try await get(containerPath(container) + "/trash", as: TrashResponse.self)
    }

    /// Purges the container's trash now (nothing in it can be restored afterwards).
    /// Asks the server to collect garbage now (`ubiq server gc`; needs the server's administrator
    /// token as `token`).
    public func collectGarbage(dryRun: Bool) async throws -> GarbageReport {
        try await call(.POST, "/v1/admin/gc", GarbageRequest(dryRun: dryRun), as: GarbageReport.self)
    }

    public func emptyTrash(_ container: ContainerID) async throws -> TrashEmptied {
        try await call(.POST, containerPath(container) + "/trash/empty", Optional<Int>.none, as: TrashEmptied.self)
    }

    // MARK: key-value

    public func kvAll(_ store: ContainerID) async throws -> KVEntriesResponse {
        try await get("/v1/kv/\(Self.escape(store.string))", as: KVEntriesResponse.self)
    }

    public func kvChanges(_ store: ContainerID, after cursor: Int64, limit: Int = WireLimits.defaultPage) async throws -> KVEntriesResponse {
        try await get("/v1/kv/\(Self.escape(store.string))/changes?cursor=\(cursor)&limit=\(limit)", as: KVEntriesResponse.self)
    }

    /// A key's last writes, newest first (a delete has no value).
    public func kvHistory(_ store: ContainerID, key: String) async throws -> [KVEntry] {
        try await get("/v1/kv/\(Self.escape(store.string))/history?key=\(Self.escape(key))", as: KVEntriesResponse.self).entries
    }

    public func kvSet(_ store: ContainerID, _ entries: [KVEntry]) async throws -> KVSetResponse {
        try await call(.POST, "/v1/kv/\(Self.escape(store.string))", KVSetRequest(entries: entries), as: KVSetResponse.self)
    }

    // MARK: raw access (tests of hostile input)

    /// Sends raw bytes to any path and returns status and body; never throws for HTTP error statuses.
    public func raw(_ method: HTTPMethod, _ path: String, body: [UInt8]?, contentType: String = "application/json") async throws -> (status: Int, body: [UInt8]) {
        do {
            let (s, b) = try await send(method, path, body: body, contentType: contentType)
            return (s, Array(b.readableBytesView))
        } catch let e as ClientError where e.status != nil {
            return (e.status!, Array((try? WireCoding.encode(APIErrorBody(code: e.code, message: e.message))) ?? Data()))
        }
    }
}
