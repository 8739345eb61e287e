import Crypto
import Foundation
import Hummingbird
import UbiqCore
import UbiqProtocol

/// Requests of the server's administrator to the running server — `ubiq server gc` while the
/// server holds its data folder. They carry `adminToken` (written to a file in the data folder
/// only the server's user can read); a server without one answers them as unknown.
struct AdminRoutes: Sendable {
    /// nil: the server takes no administrator requests (the routes answer as unknown).
    let adminToken: String?
    let collector: ChunkCollector

    func add(to router: Router<UbiqRequestContext>) {
        router.post("/v1/admin/gc") { request, _ -> Response in
            try self.authenticateAdmin(request)
            let body = try await request.decodeJSON(GarbageRequest.self)
            return try json(try await self.collector.collectGarbageForAPerson(dryRun: body.dryRun))
        }
    }

    /// Passes only the administrator's token (compared in constant time).
    func authenticateAdmin(_ request: Request) throws {
        guard let adminToken else { throw APIFailure(.notFound, "no such route") }
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "), header.utf8.count <= 200,
              ServerServices.sameSecret(String(header.dropFirst(7)), adminToken) else {
            throw APIFailure(.unauthorized, "not the server's administrator")
        }
    }
}

extension ServerServices {
    /// True when `a` and `b` are equal, in a time that does not depend on where they differ.
    static func sameSecret(_ a: String, _ b: String) -> Bool {
        // Equal-length digests, so neither the length nor the first difference shows.
        let x = Array(SHA256.hash(data: Array(a.utf8))), y = Array(SHA256.hash(data: Array(b.utf8)))
        var diff: UInt8 = 0
        for i in 0..<x.count { diff |= x[i] ^ y[i] }
        return diff == 0
    }

    /// A new administrator token.
    public static func newAdminToken() -> String { "adm_" + Authenticator.newToken().dropFirst(4) }
}
