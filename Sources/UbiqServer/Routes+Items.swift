import Foundation
import Hummingbird
import UbiqCore
import UbiqProtocol
import UbiqStorage

/// `/v1/containers/:container/…`: commits (one or a batch), manifests, moves, deletes,
/// restores, versions and conflicts, the change feed, the trash; each change pushed to the
/// account's devices.
struct ItemRoutes: Sendable {
    let auth: Authenticator
    let metadata: any MetadataStore
    let publisher: Publisher
    let collector: ChunkCollector
    let clock: @Sendable () -> Date

    /// A commit request as the store takes it: a folder without content, a delta applied to its base.
    func commitInput(_ ctx: AuthContext, _ container: ContainerID, _ body: CommitRequest, expansion: inout CommitExpansion,
                     generation: Int?) async throws -> CommitInput {
        if body.kind == .folder && (body.manifest != nil || body.manifestDelta != nil) { throw APIFailure(.invalidRequest, "a folder has no content") }
        if let p = body.permissions, !(0...0o777).contains(p) { throw APIFailure(.invalidRequest, "permissions are 0 to 0o777 (511), got \(p)") }
        if let s = body.sealed, s.utf8.count > WireLimits.maxSealedRecordBytes {
            throw APIFailure(.invalidRequest, "a sealed record is at most \(WireLimits.maxSealedRecordBytes) bytes")
        }
        if let generation, let s = body.sealed, let epoch = RecordCipher.epoch(of: s), epoch < generation {
            // The account's key was rolled (a device revoked): nothing new is sealed with an old one.
            throw APIFailure(.keyMissing, "sealed with the account's key of epoch \(epoch), which was rolled to epoch \(generation): take the new key and send it again")
        }
        var manifest = body.manifest
        if manifest == nil, let delta = body.manifestDelta {
            manifest = try await expansion.expand(delta) { try await self.metadata.manifest(ctx, container: container, version: $0) }
        }
        return CommitInput(itemID: body.itemID, versionID: body.versionID, path: body.path, kind: body.kind,
                           base: body.base, modified: body.modified, manifest: manifest, parent: body.parent,
                           permissions: body.kind == .file ? body.permissions : nil, sealed: body.kind == .file ? body.sealed : nil)
    }

    /// An encrypted account's newest key generation, as its device list says — read only for a
    /// request that carries sealed records (a plain account's never do).
    func generation(_ ctx: AuthContext, for commits: [CommitRequest]) async throws -> Int? {
        guard commits.contains(where: { $0.sealed != nil }) else { return nil }
        return try await metadata.keyGeneration(accountID: ctx.accountID)
    }

    /// The expansion budget of a commit request: the whole request checked from its bodies first,
    /// the account's reference room read only when a delta needs it.
    func expansion(_ ctx: AuthContext, for commits: [CommitRequest]) async throws -> CommitExpansion {
        try CommitExpansion.checkRequest(commits)
        guard commits.contains(where: { $0.manifest == nil && $0.manifestDelta != nil }) else { return CommitExpansion(room: .max) }
        return CommitExpansion(room: try await metadata.referenceRoom(accountID: ctx.accountID))
    }

    func add(to router: Router<UbiqRequestContext>) {
        let base = "/v1/containers/:container"

        router.post("\(base)/commit") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let container = try context.container()
            let body = try await request.decodeJSON(CommitRequest.self, limit: WireLimits.maxCommitBody)
            var expansion = try await self.expansion(ctx, for: [body])
            let generation = try await self.generation(ctx, for: [body])
            let input = try await self.commitInput(ctx, container, body, expansion: &expansion, generation: generation)
            let r = try await self.metadata.commit(ctx, container: container, input, now: self.clock())
            if r.outcome != .unchanged { await self.publisher.notify(ctx, container, cursor: r.cursor) }
            return try json(CommitResponse(outcome: r.outcome, item: r.item, version: r.version, missing: r.missing))
        }

        router.post("\(base)/commits") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let container = try context.container()
            let body = try await request.decodeJSON(CommitBatchRequest.self, limit: WireLimits.maxCommitBody)
            guard body.commits.count <= WireLimits.maxCommitsPerBatch else {
                throw APIFailure(.invalidRequest, "at most \(WireLimits.maxCommitsPerBatch) commits per batch")
            }
            // Inputs that cannot even be read (bad delta) are answered alone; the rest go in one transaction.
            var expansion = try await self.expansion(ctx, for: body.commits)
            let generation = try await self.generation(ctx, for: body.commits)
            var inputs: [Result<CommitInput, APIFailure>] = []
            for c in body.commits {
                do { inputs.append(.success(try await self.commitInput(ctx, container, c, expansion: &expansion, generation: generation))) } catch {
                    inputs.append(.failure(APIFailure.from(error)))
                }
            }
            let valid = inputs.compactMap { try? $0.get() }
            var decided = try await self.metadata.commitMany(ctx, container: container, valid, now: self.clock())[...]
            var results: [CommitBatchResult] = []
            var cursor: Int64?
            for i in inputs {
                switch i {
                case .failure(let e): results.append(CommitBatchResult(response: nil, error: .init(code: e.code, message: e.message, item: e.item)))
                case .success:
                    switch decided.removeFirst() {
                    case .success(let r):
                        if r.outcome != .unchanged { cursor = max(cursor ?? r.cursor, r.cursor) }
                        // A version that is the item's current one is not sent twice (the client fills it in).
                        let version = r.version == r.item.current ? nil : r.version
                        results.append(CommitBatchResult(response: CommitResponse(outcome: r.outcome, item: r.item, version: version, missing: r.missing), error: nil))
                    case .failure(let e): results.append(CommitBatchResult(response: nil, error: .init(code: e.code, message: e.message, item: e.item)))
                    }
                }
            }
            if let cursor { await self.publisher.notify(ctx, container, cursor: cursor) }
            return try json(CommitBatchResponse(results: results))
        }

        router.post("\(base)/manifests") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let body = try await request.decodeJSON(ManifestsRequest.self)
            guard body.versions.count <= WireLimits.maxCommitsPerBatch else {
                throw APIFailure(.invalidRequest, "at most \(WireLimits.maxCommitsPerBatch) versions per query")
            }
            // Each version once (1,000 copies of one big manifest cost 800 MiB of memory).
            guard Set(body.versions).count == body.versions.count else { throw APIFailure(.invalidRequest, "a version appears twice in one query") }
            return try json(ManifestsResponse(manifests: try await self.metadata.manifests(ctx, container: try context.container(), versions: body.versions)))
        }

        router.post("\(base)/versions/:version/complete") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let container = try context.container()
            let version = try context.uuidParameter("version", as: VersionID.self)
            let change = try await self.metadata.complete(ctx, container: container, version: version, now: self.clock())
            await self.publisher.notify(ctx, container, cursor: change.cursor)
            return try json(change.item)
        }

        router.get("\(base)/versions/:version/manifest") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            return try json(try await self.metadata.manifest(ctx, container: try context.container(),
                                                             version: try context.uuidParameter("version", as: VersionID.self)))
        }

        router.get("\(base)/versions/:version/delta") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let container = try context.container()
            let version = try context.uuidParameter("version", as: VersionID.self)
            guard let raw = request.uri.queryParameters["base"], let baseID = VersionID(string: String(raw)) else {
                throw APIFailure(.invalidRequest, "query parameter 'base' must be a version ID")
            }
            let new = try await self.metadata.manifest(ctx, container: container, version: version)
            let base = try await self.metadata.manifest(ctx, container: container, version: baseID)
            return try json(ManifestDelta.make(base: baseID, baseChunks: base.chunks, new: new))
        }

        router.post("\(base)/items/:item/move") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let container = try context.container()
            let item = try context.uuidParameter("item", as: ItemID.self)
            let body = try await request.decodeJSON(MoveRequest.self, limit: 16 << 10)
            // `?parent=ID`: only into that folder (`item_changed` when another, or none, is there).
            var parent: ItemID?
            if let raw = request.uri.queryParameters["parent"] {
                guard let p = ItemID(string: String(raw)) else { throw APIFailure(.invalidRequest, "query parameter 'parent' must be an item ID") }
                parent = p
            }
            let change = try await self.metadata.move(ctx, container: container, item: item, to: body.path, into: parent, now: self.clock())
            await self.publisher.notify(ctx, container, cursor: change.cursor)
            return try json(change.item)
        }

        router.post("\(base)/items/:item/delete") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let container = try context.container()
            let item = try context.uuidParameter("item", as: ItemID.self)
            // `?since=N`: only if neither the item nor anything under it changed after change N.
            let change: ItemChange
            if let raw = request.uri.queryParameters["since"] {
                guard let since = Int64(String(raw)), since >= 0 else { throw APIFailure(.invalidRequest, "query parameter 'since' must be a change position") }
                change = try await self.metadata.delete(ctx, container: container, item: item, unchangedSince: since, now: self.clock())
            } else {
                change = try await self.metadata.delete(ctx, container: container, item: item, now: self.clock())
            }
            await self.publisher.notify(ctx, container, cursor: change.cursor)
            return try json(change.item)
        }

        router.post("\(base)/items/:item/restore") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let container = try context.container()
            let change = try await self.metadata.restore(ctx, container: container, item: try context.uuidParameter("item", as: ItemID.self), now: self.clock())
            await self.publisher.notify(ctx, container, cursor: change.cursor)
            return try json(change.item)
        }

        router.get("\(base)/items/:item/versions") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let v = try await self.metadata.versions(ctx, container: try context.container(), item: try context.uuidParameter("item", as: ItemID.self))
            return try json(VersionsResponse(item: v.item, current: v.current, conflicts: v.conflicts, others: v.others))
        }

        router.post("\(base)/items/:item/resolve") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let container = try context.container()
            let item = try context.uuidParameter("item", as: ItemID.self)
            let body = try await request.decodeJSON(ResolveRequest.self, limit: 16 << 10)
            let change = try await self.metadata.resolve(ctx, container: container, item: item, keep: body.keep, now: self.clock())
            await self.publisher.notify(ctx, container, cursor: change.cursor)
            return try json(change.item)
        }

        router.get("\(base)/changes") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let (cursor, limit) = try request.page()
            let page = try await self.metadata.changes(ctx, container: try context.container(), after: cursor, limit: limit)
            return try json(ChangesResponse(items: page.items, cursor: page.cursor, hasMore: page.hasMore))
        }

        router.get("\(base)/trash") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            return try json(TrashResponse(items: try await self.metadata.trash(ctx, container: try context.container())))
        }

        router.post("\(base)/trash/empty") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let r = try await self.metadata.emptyTrash(ctx, container: try context.container())
            if r.items > 0 { await self.collector.collectSoon() }  // the disk back soon, not in hours
            return try json(TrashEmptied(items: r.items, bytes: r.bytes))
        }
    }
}
