import Foundation
import Hummingbird
import UbiqCore
import UbiqProtocol
import UbiqTransport
import UbiqStorage

/// `/v1/chunks…`: which chunks an account lacks, uploads (one or framed batches, under the
/// quota and apart from garbage collection's decisions), downloads of chunks the account holds.
struct ChunkRoutes: Sendable {
    let auth: Authenticator
    let metadata: any MetadataStore
    let chunks: any ChunkStore
    let quota: QuotaGuard
    let collector: ChunkCollector
    let arrivals: ChunkArrivals
    let clock: @Sendable () -> Date

    func add(to router: Router<UbiqRequestContext>) {
        router.post("/v1/chunks/missing") { request, _ -> Response in
            let ctx = try await self.auth.authenticate(request)
            let body = try await request.decodeJSON(MissingChunksRequest.self)
            guard body.hashes.count <= WireLimits.maxHashesPerQuery else {
                throw APIFailure(.invalidRequest, "at most \(WireLimits.maxHashesPerQuery) hashes per query")
            }
            return try json(MissingChunksResponse(missing: try await self.metadata.missingChunks(accountID: ctx.accountID, hashes: body.hashes)))
        }

        router.put("/v1/chunks/:hash") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let hash = try context.hashParameter()
            if let length = request.headers[.contentLength].flatMap(Int.init), length > WireLimits.maxChunkBody {
                throw APIFailure(.payloadTooLarge, "a chunk is at most \(WireLimits.maxChunkBody) bytes")
            }
            let buffer: ByteBuffer
            do { buffer = try await request.body.collect(upTo: WireLimits.maxChunkBody) } catch {
                throw APIFailure(.payloadTooLarge, "a chunk is at most \(WireLimits.maxChunkBody) bytes")
            }
            let bytes = Array(buffer.readableBytesView)
            guard !bytes.isEmpty else { throw APIFailure(.invalidRequest, "a chunk is never empty") }
            guard ContentHash.of(bytes) == hash else { throw APIFailure(.hashMismatch, "the uploaded bytes do not hash to \(hash)") }
            // Held already, or the usage to reserve against: one read (the mark taken before it).
            let mark = await self.quota.mark(account: ctx.accountID)
            let standing = try await self.metadata.chunkStanding(accountID: ctx.accountID, hash: hash)
            if standing.owned { return Response(status: .ok) }
            try await self.quota.withReservedQuota(account: ctx.accountID, bytes: Int64(bytes.count), mark: mark, usage: (standing.quota, standing.used)) {
                try await self.collector.storing([hash]) {
                    try await self.chunks.put(hash, bytes)
                    try await self.metadata.recordChunk(accountID: ctx.accountID, hash: hash, size: bytes.count, now: self.clock())
                }
            }
            await self.arrivals.arrived(account: ctx.accountID)
            return Response(status: .created)
        }

        // Many chunks in one body (`ChunkFrames`), stored with two file-system flushes in all.
        router.post("/v1/chunks") { request, _ -> Response in
            let ctx = try await self.auth.authenticate(request)
            let limit = WireLimits.maxChunkBatchBody + 68 * WireLimits.maxChunksPerBatch  // named framing included
            if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
                throw APIFailure(.payloadTooLarge, "a chunk batch is at most \(WireLimits.maxChunkBatchBody) bytes")
            }
            let body: PackBytes
            do { body = try await request.collectPack(upTo: limit) } catch let e as APIFailure where e.code != .payloadTooLarge {
                throw e
            } catch {
                throw APIFailure(.payloadTooLarge, "a chunk batch is at most \(WireLimits.maxChunkBatchBody) bytes")
            }
            // The chunks stay where they arrived in the body: hashed there, and stored from there.
            let named: [(ContentHash, Range<Int>)]
            if request.headers[.contentType] == NamedChunkFrames.contentType {
                guard let chunks = body.withBytes({ NamedChunkFrames.ranges($0) }) else {
                    throw APIFailure(.invalidRequest, "a named chunk batch is chunks of 1 byte to \(WireLimits.maxChunkBody) bytes, each after its hash and length, at most \(WireLimits.maxChunksPerBatch)")
                }
                named = chunks
                for (i, (h, range)) in named.enumerated() where body.withBytes(range, { ContentHash.of(buffer: $0) }) != h {
                    throw APIFailure(.hashMismatch, "chunk \(i + 1) of the batch does not hash to \(h); nothing of the batch was stored")
                }
            } else {
                guard let ranges = body.withBytes({ ChunkFrames.ranges($0) }) else {
                    throw APIFailure(.invalidRequest, "a chunk batch is length-prefixed chunks of 1 byte to \(WireLimits.maxChunkBody) bytes, at most \(WireLimits.maxChunksPerBatch)")
                }
                named = ranges.map { r in (body.withBytes(r) { ContentHash.of(buffer: $0) }, r) }
            }
            let missing = Set(try await self.metadata.missingChunks(accountID: ctx.accountID, hashes: named.map(\.0)))
            let fresh = named.filter { missing.contains($0.0) }
            if !fresh.isEmpty {
                let adding = fresh.reduce(Int64(0)) { $0 + Int64($1.1.count) }
                try await self.quota.withReservedQuota(account: ctx.accountID, bytes: adding) {
                    try await self.collector.storing(fresh.map(\.0)) {
                        try await self.chunks.putMany(body: body, chunks: fresh, hashesChecked: true)
                        try await self.metadata.recordChunks(accountID: ctx.accountID, fresh.map { ($0.0, $0.1.count) }, now: self.clock())
                    }
                }
                await self.arrivals.arrived(account: ctx.accountID)
            }
            return try json(MissingChunksResponse(missing: []))
        }

        // Many chunks in one answer, in the order asked; only the account's own chunks. Not
        // re-hashed here: the client checks every chunk (or the whole file) it receives.
        router.post("/v1/chunks/fetch") { request, _ -> Response in
            let ctx = try await self.auth.authenticate(request)
            let body = try await request.decodeJSON(FetchChunksRequest.self)
            guard body.hashes.count <= WireLimits.maxChunksPerBatch else {
                throw APIFailure(.invalidRequest, "at most \(WireLimits.maxChunksPerBatch) chunks per fetch")
            }
            // Chunks still being uploaded (by another device of the account) may be waited for.
            // In all a fetch waits at most twice that, well within a client's request timeout.
            let wait = Duration.seconds(min(max(body.waitSeconds ?? 0, 0), WireLimits.maxFetchWait))
            let deadline = ContinuousClock.now + wait * 2
            var notHeld = body.hashes  // after the first look, only those still missing are asked for again
            while true {
                let seen = await self.arrivals.current(account: ctx.accountID)
                notHeld = try await self.metadata.missingChunks(accountID: ctx.accountID, hashes: notHeld)
                guard let h = notHeld.first else { break }
                let left = min(wait, deadline - ContinuousClock.now)
                guard left > .zero, await self.arrivals.wait(account: ctx.accountID, after: seen, timeout: left) else {
                    throw APIFailure(.notFound, "no chunk \(h)")
                }
            }
            // Room for chunks of about the average size, so the answer is rarely copied to grow.
            var out = ByteBufferAllocator.transfer.buffer(capacity: min(WireLimits.maxChunkBatchBody, body.hashes.count * (48 << 10)))
            var next = 0  // chunks come in order; one skipped is absent from the store
            try await self.chunks.visitMany(body.hashes, limit: WireLimits.maxChunkBatchBody, verify: false) { i, bytes in
                guard i == next else { throw APIFailure(.notFound, "no chunk \(body.hashes[next])") }
                out.writeInteger(UInt32(bytes.count), endianness: .big)
                out.writeBytes(bytes)
                next += 1
            }
            guard next == body.hashes.count else { throw APIFailure(.notFound, "no chunk \(body.hashes[next])") }
            return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: .init(byteBuffer: out))
        }

        router.get("/v1/chunks/:hash") { request, context -> Response in
            let ctx = try await self.auth.authenticate(request)
            let hash = try context.hashParameter()
            // Knowing a hash grants nothing: only chunks this account uploaded are served.
            guard try await self.metadata.ownsChunk(accountID: ctx.accountID, hash: hash),
                  let bytes = try await self.chunks.get(hash) else {
                throw APIFailure(.notFound, "no chunk \(hash)")
            }
            return Response(status: .ok, headers: [.contentType: "application/octet-stream"],
                            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }
}
