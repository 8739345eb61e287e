import Foundation
import Hummingbird
import UbiqCore
import UbiqProtocol
import UbiqStorage

/// `/v1/kv/…`: the synced key-value stores (settings), every write pushed to the account's devices.
struct KeyValueRoutes: Sendable {
    let auth: Authenticator
    let keyValues: any KeyValueStore
    /// An encrypted account's device list says its newest key generation (values sealed with
    /// an older one are refused).
    let accountKeys: any AccountKeyStore
    let publisher: Publisher
    let clock: @Sendable () -> Date

    func add(to router: Router<UbiqRequestContext>) {
        router.get("/v1/kv/:store") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let page = try await self.keyValues.kvAll(ctx, store: try context.store())
            return try json(KVEntriesResponse(entries: page.entries, cursor: page.cursor, hasMore: false))
        }

        router.get("/v1/kv/:store/changes") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let (cursor, limit) = try request.page()
            let page = try await self.keyValues.kvChanges(ctx, store: try context.store(), after: cursor, limit: limit)
            return try json(KVEntriesResponse(entries: page.entries, cursor: page.cursor, hasMore: page.hasMore))
        }

        // A key's last writes, newest first (who, when, what; a delete has no value).
        router.get("/v1/kv/:store/history") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            guard let key = request.uri.queryParameters.get("key") else { throw APIFailure(.invalidRequest, "history of which key? (?key=…)") }
            let entries = try await self.keyValues.kvHistory(ctx, store: try context.store(), key: key)
            return try json(KVEntriesResponse(entries: entries, cursor: 0, hasMore: false))
        }

        router.post("/v1/kv/:store") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let store = try context.store()
            let body = try await request.decodeJSON(KVSetRequest.self)
            guard !body.entries.isEmpty else { throw APIFailure(.invalidRequest, "no entries") }
            guard Set(body.entries.map(\.key)).count == body.entries.count else { throw APIFailure(.invalidRequest, "a key appears twice in one set") }
            // A device may only write under its own device ID.
            guard body.entries.allSatisfy({ $0.device == ctx.deviceID }) else {
                throw APIFailure(.forbidden, "entries must carry the writing device's ID")
            }
            if body.entries.contains(where: { $0.value != nil }),
               let generation = try await self.accountKeys.keyGeneration(accountID: ctx.accountID),
               let stale = body.entries.compactMap({ $0.value.flatMap(SettingsCipher.epoch(of:)) }).filter({ $0 < generation }).first {
                // The account's key was rolled: nothing new is sealed with an old one.
                throw APIFailure(.keyMissing, "a setting sealed with the account's key of epoch \(stale), which was rolled to epoch \(generation): take the new key and send it again")
            }
            let r = try await self.keyValues.kvSet(ctx, store: store, entries: body.entries, now: self.clock())
            if !r.applied.isEmpty {
                await self.publisher.publish(account: ctx.accountID, PushMessage(kind: .kv, store: store.string, cursor: r.cursor, origin: ctx.deviceID))
            }
            return try json(KVSetResponse(applied: r.applied, cursor: r.cursor))
        }
    }
}
