import Foundation
import Hummingbird
import UbiqCore
import UbiqProtocol
import UbiqStorage

/// The server's error: a stable code, a message and the HTTP status that carries them.
/// Every failed request answers `{"error": {"code", "message"}}`.
public struct APIFailure: Error, HTTPResponseError, CustomStringConvertible {
    public let code: ErrorCode
    public let message: String
    /// Missing chunk hashes for `incomplete_content`.
    public let missing: [ContentHash]
    /// The item at the path, for an encrypted account's new file refused with `path_exists`.
    public let item: ItemID?

    public init(_ code: ErrorCode, _ message: String, missing: [ContentHash] = [], item: ItemID? = nil) {
        self.code = code
        self.message = message
        self.missing = missing
        self.item = item
    }

    public var status: HTTPResponse.Status { HTTPResponse.Status(code: code.httpStatus) }
    public var description: String { "\(code.rawValue): \(message)" }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let data = (try? WireCoding.encode(APIErrorBody(code: code, message: message, missing: missing.isEmpty ? nil : missing, item: item))) ?? Data()
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Maps any error thrown while handling a request onto a stable code.
    static func from(_ error: any Error) -> APIFailure {
        switch error {
        case let e as APIFailure: return e
        case let e as StorageError: return APIFailure(e.code, e.message, missing: e.missing, item: e.item)
        case let e as CoreError: return APIFailure(e.code, e.message)
        case let e as DecodingError: return APIFailure(.invalidRequest, "malformed JSON: \(describe(e))")
        case let e as HTTPError:
            switch e.status.code {
            case 404: return APIFailure(.notFound, "no such endpoint")
            case 405: return APIFailure(.notFound, "method not allowed here")
            case 413: return APIFailure(.payloadTooLarge, "request body too large")
            case 401: return APIFailure(.unauthorized, e.body ?? "not signed in")
            default: return APIFailure(.invalidRequest, e.body ?? "bad request (\(e.status.code))")
            }
        default: return APIFailure(.internalError, "internal error")
        }
    }

    static func describe(_ e: DecodingError) -> String {
        func path(_ c: DecodingError.Context) -> String {
            let p = c.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return p.isEmpty ? c.debugDescription : "\(p): \(c.debugDescription)"
        }
        switch e {
        case .dataCorrupted(let c): return path(c)
        case .keyNotFound(let k, let c): return "missing field '\(k.stringValue)'" + (c.codingPath.isEmpty ? "" : " in \(path(c))")
        case .typeMismatch(_, let c), .valueNotFound(_, let c): return path(c)
        @unknown default: return "undecodable"
        }
    }
}

/// Turns every error into the JSON error shape and logs unexpected ones.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// 12 hex digits naming one failed request in the log.
    static func requestID() -> String {
        String((0..<6).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined())
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            var failure = APIFailure.from(error)
            if failure.code == .internalError || failure.code == .storageFailure {
                // The detail (a database host, an object-store endpoint, a file path) is the
                // operator's: the log has it under an ID the client is given (#45 row 7).
                let id = Self.requestID()
                context.logger.error("request \(id): \(request.method) \(request.uri.path): \(String(describing: error))")
                failure = APIFailure(failure.code, failure.code == .storageFailure
                                        ? "the server's storage is not available right now (request \(id); the server's log has the detail)"
                                        : "internal error (request \(id); the server's log has the detail)")
            }
            return try failure.response(from: request, context: context)
        }
    }
}
