import Foundation
import Hummingbird
import UbiqCore
import UbiqProtocol
import UbiqStorage

/// `/v1/login`, `/v1/tokens/revoke`, `/v1/devices`, `/v1/account`: sessions and what an account
/// may know about itself.
struct AccountRoutes: Sendable {
    let auth: Authenticator
    let metadata: any MetadataStore
    let admin: any AccountAdminStore
    let logins: Logins
    let push: PushHub
    let peers: PeerRegistry
    let publisher: Publisher
    let clock: @Sendable () -> Date

    func add(to router: Router<UbiqRequestContext>) {
        router.post("/v1/login") { request, context -> Response in
            let body = try await request.decodeJSON(LoginRequest.self, limit: 16 << 10)
            let user = body.user
            let deviceName = body.deviceName.trimmingCharacters(in: .whitespaces)
            guard !deviceName.isEmpty, deviceName.utf8.count <= WireLimits.maxDeviceNameBytes,
                  !deviceName.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw APIFailure(.invalidValue, "device name must be 1-\(WireLimits.maxDeviceNameBytes) bytes without control characters")
            }
            let now = self.clock()
            // The slot is taken before the (slow) hashing and given back after it.
            let shared = await self.logins.sharedFailures(user: String(user.prefix(256)), address: context.peer, now: now)
            guard let ticket = await self.logins.throttle.begin(user: String(user.prefix(256)), address: context.peer, now: now, shared: shared) else {
                throw APIFailure(.tooManyAttempts, "too many failed logins for '\(user.prefix(64))' or from this address; wait a minute")
            }
            let account: AccountRecord?
            do {
                account = user.utf8.count <= WireLimits.maxUserNameBytes ? try await self.metadata.account(named: user) : nil
            } catch {
                await self.logins.loginFinished(ticket, success: false, now: now)
                throw error
            }
            // An unknown user costs the same hashing as a known one.
            let verifier: PasswordRecord? = if let account { account.password } else { await self.logins.passwordChecks.decoy(rounds: self.logins.passwordRounds) }
            var checked: Bool? = false
            if let verifier { checked = await self.logins.passwordChecks.verify(body.password, against: verifier) }
            guard let checked else {
                await self.logins.loginFinished(ticket, success: false, now: now)
                throw APIFailure(.tooManyAttempts, "the server is busy checking other logins; try again in a moment")
            }
            guard checked, let account else {
                await self.logins.loginFinished(ticket, success: false, now: now)
                throw APIFailure(.badCredentials, "wrong user name or password")
            }
            await self.logins.loginFinished(ticket, success: true, now: now)
            let token = Authenticator.newToken()
            let device = body.deviceID ?? DeviceID(uuid: UUID())
            let ctx = try await self.metadata.createSession(accountID: account.id, deviceID: device, deviceName: deviceName,
                                                            tokenHash: Authenticator.tokenHash(token), now: now)
            return try json(LoginResponse(token: token, user: ctx.user, deviceID: ctx.deviceID, deviceName: ctx.deviceName))
        }

        router.post("/v1/tokens/revoke") { request, _ -> Response in
            let ctx = try await self.auth.authenticate(request)
            let body = try await request.decodeJSON(RevokeRequest.self, limit: 16 << 10)
            if let device = body.deviceID {
                guard try await self.metadata.revokeDevice(accountID: ctx.accountID, deviceID: device) else {
                    throw APIFailure(.notFound, "no device \(device) on this account")
                }
                await self.push.disconnect(account: ctx.accountID, device: device)
                await self.peers.remove(account: ctx.accountID, device: device)
            } else if let header = request.headers[.authorization] {
                try await self.metadata.revoke(tokenHash: Authenticator.tokenHash(String(header.dropFirst(7))))
                await self.push.disconnect(account: ctx.accountID, device: ctx.deviceID)
                await self.peers.remove(account: ctx.accountID, device: ctx.deviceID)
            }
            return Response(status: .noContent)
        }

        router.get("/v1/devices") { request, _ -> Response in
            let ctx = try await self.auth.authenticate(request)
            let devices = try await self.admin.devices(accountID: ctx.accountID).map {
                DeviceInfo(id: $0.id, name: $0.name, created: $0.created, lastSeen: $0.lastSeen, signedIn: $0.signedIn, current: $0.id == ctx.deviceID)
            }
            return try json(DevicesResponse(devices: devices))
        }

        router.get("/v1/account/containers") { request, _ -> Response in
            let ctx = try await self.auth.authenticate(request)
            return try json(AccountContainersResponse(containers: try await self.metadata.containerNames(accountID: ctx.accountID)))
        }

        router.get("/v1/account/keys") { request, _ -> Response in
            let ctx = try await self.auth.authenticate(request)
            return try json(AccountKeysResponse(keys: try await self.metadata.accountKeys(accountID: ctx.accountID)))
        }

        router.put("/v1/account/keys/:name") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let name = try context.parameters.require("name")
            let body = try await request.decodeJSON(AccountKeyRequest.self, limit: AccountKeyLimits.maxValueBytes + 1024)
            guard try await self.metadata.putAccountKey(accountID: ctx.accountID, name: name, value: body.value, replace: body.replace,
                                                        expecting: body.expecting, now: self.clock()) else {
                if body.expecting != nil { throw APIFailure(.itemChanged, "the sealed key '\(name)' changed meanwhile; read it again") }
                throw APIFailure(.pathExists, "this account already keeps a sealed key named '\(name)'")
            }
            await self.publisher.publish(account: ctx.accountID, PushMessage(kind: .keys, cursor: 0, origin: ctx.deviceID))
            return Response(status: .created)
        }

        router.delete("/v1/account/keys/:name") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let name = try context.parameters.require("name")
            guard try await self.metadata.deleteAccountKey(accountID: ctx.accountID, name: name) else {
                throw APIFailure(.notFound, "this account keeps no sealed key named '\(name.prefix(64))'")
            }
            await self.publisher.publish(account: ctx.accountID, PushMessage(kind: .keys, cursor: 0, origin: ctx.deviceID))
            return Response(status: .noContent)
        }

        router.get("/v1/account") { request, _ -> Response in
            let ctx = try await self.auth.authenticate(request)
            let u = try await self.metadata.usage(accountID: ctx.accountID)
            return try json(AccountInfo(user: ctx.user, quota: u.quota, used: u.used, device: ctx.deviceID, deviceName: ctx.deviceName))
        }
    }
}
