import Foundation
import Hummingbird
import UbiqCore
import UbiqProtocol
import UbiqStorage

extension Request {
    /// The body, received straight into page-aligned memory taken at once from the declared
    /// length (a reusable transfer block for a chunk batch), where a chunk store can keep it as a
    /// pack without copying it; `payload_too_large` past `limit`.
    func collectPack(upTo limit: Int) async throws -> PackBytes {
        let declared = headers[.contentLength].flatMap(Int.init)
        if let declared, declared > limit { throw APIFailure(.payloadTooLarge, "request body larger than \(limit) bytes") }
        guard let pack = PackBytes(capacity: declared ?? limit) else { throw APIFailure(.internalError, "out of memory for a request body") }
        for try await part in body {
            guard part.withUnsafeReadableBytes({ pack.append($0) }) else { throw APIFailure(.payloadTooLarge, "request body larger than \(declared ?? limit) bytes") }
        }
        return pack
    }

    /// Reads and decodes a JSON body of at most `limit` bytes.
    func decodeJSON<T: Decodable>(_ type: T.Type, limit: Int = WireLimits.maxJSONBody) async throws -> T {
        let buffer: ByteBuffer
        do {
            buffer = try await body.collect(upTo: limit)
        } catch {
            throw APIFailure(.payloadTooLarge, "request body larger than \(limit) bytes")
        }
        do {
            return try WireCoding.decode(T.self, from: Data(buffer.readableBytesView))
        } catch let e as DecodingError {
            throw APIFailure(.invalidRequest, "malformed JSON: \(APIFailure.describe(e))")
        } catch let e as CoreError {
            throw APIFailure(e.code, e.message)
        } catch {
            throw APIFailure(.invalidRequest, "malformed JSON")
        }
    }
}

/// A JSON response.
func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
    let data = try WireCoding.encode(value)
    return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
}

extension RequestContext {
    func container() throws -> ContainerID {
        let raw = try parameters.require("container")
        do { return try ContainerID(validating: raw) } catch let e as CoreError { throw APIFailure(e.code, e.message) }
    }
    func store() throws -> ContainerID {
        let raw = try parameters.require("store")
        do { return try ContainerID(validating: raw) } catch let e as CoreError { throw APIFailure(.invalidContainer, e.message) }
    }
    func uuidParameter<T: UUIDIdentifier>(_ name: String, as: T.Type) throws -> T {
        let raw = try parameters.require(name)
        guard let id = T(string: raw) else { throw APIFailure(.invalidRequest, "'\(raw.prefix(64))' is not an ID") }
        return id
    }
    func hashParameter() throws -> ContentHash {
        do { return try ContentHash(validating: try parameters.require("hash")) } catch let e as CoreError { throw APIFailure(e.code, e.message) }
    }
}

extension Request {
    /// `cursor` (default 0) and `limit` (default 500, at most 5000) of a change feed.
    func page() throws -> (cursor: Int64, limit: Int) {
        let cursor = try int64Query("cursor", default: 0)
        let limit = Int(min(try int64Query("limit", default: Int64(WireLimits.defaultPage)), Int64(WireLimits.maxPage)))
        guard limit > 0 else { throw APIFailure(.invalidRequest, "limit must be at least 1") }
        return (cursor, limit)
    }

    func int64Query(_ name: String, default d: Int64) throws -> Int64 {
        guard let raw = uri.queryParameters[Substring(name)] else { return d }
        guard let v = Int64(raw), v >= 0 else { throw APIFailure(.invalidRequest, "query parameter '\(name)' must be a non-negative integer") }
        return v
    }
}
