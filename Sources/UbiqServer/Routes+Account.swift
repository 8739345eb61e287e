import Foundation
import Hummingbird
import UbiqCore
import UbiqProtocol
import UbiqStorage

extension ServerServices {
    /// A verifier for a password nobody has, so a login for an unknown user costs the same time.
    static let decoy: PasswordRecord? = try? PasswordHasher.make("decoy-\(UInt64.random(in: 0...UInt64.max))")

    func addAccountRoutes(to router: Router<UbiqRequestContext>) {
        router.post("/v1/login") { request, _ -> Response in
            let body = try await request.decodeJSON(LoginRequest.self, limit: 16 << 10)
            let user = body.user
            let deviceName = body.deviceName.trimmingCharacters(in: .whitespaces)
            guard !deviceName.isEmpty, deviceName.utf8.count <= WireLimits.maxDeviceNameBytes,
                  !deviceName.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw APIFailure(.invalidValue, "device name must be 1-\(WireLimits.maxDeviceNameBytes) bytes without control characters")
            }
            let now = self.clock()
            if await self.throttle.isBlocked(user, now: now) {
                throw APIFailure(.tooManyAttempts, "too many failed logins for '\(user.prefix(64))'; wait a minute")
            }
            let account = user.utf8.count <= WireLimits.maxUserNameBytes ? try await self.metadata.account(named: user) : nil
            let ok: Bool
            if let account {
                ok = PasswordHasher.verify(body.password, against: account.password)
            } else {
                if let decoy = Self.decoy { _ = PasswordHasher.verify(body.password, against: decoy) }
                ok = false
            }
            guard ok, let account else {
                await self.throttle.recordFailure(user, now: now)
                throw APIFailure(.badCredentials, "wrong user name or password")
            }
            await self.throttle.recordSuccess(user)
            let token = Self.newToken()
            let device = body.deviceID ?? DeviceID(uuid: UUID())
            let ctx = try await self.metadata.createSession(accountID: account.id, deviceID: device, deviceName: deviceName,
                                                            tokenHash: Self.tokenHash(token), now: now)
            return try json(LoginResponse(token: token, user: ctx.user, deviceID: ctx.deviceID, deviceName: ctx.deviceName))
        }

        router.post("/v1/tokens/revoke") { request, _ -> Response in
            let ctx = try await self.authenticate(request)
            let body = try await request.decodeJSON(RevokeRequest.self, limit: 16 << 10)
            if let device = body.deviceID {
                guard try await self.metadata.revokeDevice(accountID: ctx.accountID, deviceID: device) else {
                    throw APIFailure(.notFound, "no device \(device) on this account")
                }
            } else if let header = request.headers[.authorization] {
                try await self.metadata.revoke(tokenHash: Self.tokenHash(String(header.dropFirst(7))))
            }
            return Response(status: .noContent)
        }

        router.get("/v1/account") { request, _ -> Response in
            let ctx = try await self.authenticate(request)
            let u = try await self.metadata.usage(accountID: ctx.accountID)
            return try json(AccountInfo(user: ctx.user, quota: u.quota, used: u.used, device: ctx.deviceID, deviceName: ctx.deviceName))
        }
    }
}
