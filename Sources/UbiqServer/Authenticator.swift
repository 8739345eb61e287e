import Foundation
import Hummingbird
import UbiqCore
import UbiqProtocol
import UbiqStorage

/// Who a request is: its bearer token resolved against the metadata (tokens are kept hashed).
struct Authenticator: Sendable {
    let metadata: any MetadataStore
    let clock: @Sendable () -> Date

    /// Resolves the bearer token of a request.
    func authenticate(_ request: Request) async throws -> AuthContext {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            throw APIFailure(.unauthorized, "not signed in: missing bearer token")
        }
        let token = String(header.dropFirst(7))
        guard token.utf8.count <= 200, let ctx = try await metadata.authenticate(tokenHash: Self.tokenHash(token), now: clock()) else {
            throw APIFailure(.unauthorized, "not signed in: the token is unknown or revoked")
        }
        return ctx
    }

    static func tokenHash(_ token: String) -> String { ContentHash.of(Array(token.utf8)).hex }

    /// The hash of a request's bearer token; nil without one.
    static func tokenHash(of request: Request) -> String? {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { return nil }
        return tokenHash(String(header.dropFirst(7)))
    }

    static func newToken() -> String {
        var rng = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
        return "ubq_" + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
