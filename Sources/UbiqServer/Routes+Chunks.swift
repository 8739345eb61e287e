import Foundation
import Hummingbird
import UbiqCore
import UbiqProtocol
import UbiqStorage

extension ServerServices {
    func addChunkRoutes(to router: Router<UbiqRequestContext>) {
        router.post("/v1/chunks/missing") { request, _ -> Response in
            let ctx = try await self.authenticate(request)
            let body = try await request.decodeJSON(MissingChunksRequest.self)
            guard body.hashes.count <= WireLimits.maxHashesPerQuery else {
                throw APIFailure(.invalidRequest, "at most \(WireLimits.maxHashesPerQuery) hashes per query")
            }
            return try json(MissingChunksResponse(missing: try await self.metadata.missingChunks(accountID: ctx.accountID, hashes: body.hashes)))
        }

        router.put("/v1/chunks/:hash") { request, context -> Response in
            let ctx = try await self.authenticate(request)
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
            if try await self.metadata.ownsChunk(accountID: ctx.accountID, hash: hash) { return Response(status: .ok) }
            let usage = try await self.metadata.usage(accountID: ctx.accountID)
            if usage.used + Int64(bytes.count) > usage.quota {
                throw APIFailure(.storageFull, "storage full: \(ByteSize.format(usage.used)) of \(ByteSize.format(usage.quota)) used")
            }
            try await self.chunks.put(hash, bytes)
            try await self.metadata.recordChunk(accountID: ctx.accountID, hash: hash, size: bytes.count)
            return Response(status: .created)
        }

        router.get("/v1/chunks/:hash") { request, context -> Response in
            let ctx = try await self.authenticate(request)
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
