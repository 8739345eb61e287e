import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Chunks on the wire, for both directions and both pipelines (one file at a time, batches of
/// small files): which the server lacks, sending them in framed requests (from memory or read
/// straight from a file), fetching them, three requests at a time. No engine state: what it
/// needs is passed in, what it learns is returned.
struct ChunkTransport: Sendable {
    let client: any SyncServer

    /// Chunk bytes per request. With each chunk's framing (68 bytes at most) a request or an
    /// answer fits one 16 MiB transfer block (`ubiq_block_alloc`), which is reused. At 16 MiB
    /// of chunks the buffers became 32 MiB, mapped afresh and zeroed page by page for every
    /// request (about a tenth of the CPU of a 1 GiB transfer).
    static let requestBytes = WireLimits.maxChunkBatchBody - 68 * WireLimits.maxChunksPerBatch
    /// Requests in flight at once.
    static let requestsAtOnce = 3

    /// Cuts `items` (in order) into requests of at most `limit` bytes and
    /// `WireLimits.maxChunksPerBatch` chunks; an item bigger than `limit` goes alone.
    static func framed<T>(_ items: [T], limit: Int = requestBytes, size: (T) -> Int) -> [[T]] {
        var out: [[T]] = []
        var current: [T] = [], bytes = 0
        for item in items {
            let n = size(item)
            if !current.isEmpty && (bytes + n > limit || current.count >= WireLimits.maxChunksPerBatch) {
                out.append(current); current = []; bytes = 0
            }
            current.append(item)
            bytes += n
        }
        if !current.isEmpty { out.append(current) }
        return out
    }

    /// The hashes of `hashes` the server does not hold (asked in pages).
    func missing(_ hashes: [ContentHash]) async throws -> Set<ContentHash> {
        var out = Set<ContentHash>()
        for start in stride(from: 0, to: hashes.count, by: WireLimits.maxHashesPerQuery) {
            out.formUnion(try await client.missingChunks(Array(hashes[start..<min(hashes.count, start + WireLimits.maxHashesPerQuery)])))
        }
        return out
    }

    /// Sends chunks held in memory, one framed request per group, all at once. Named: a file
    /// that changed since it was hashed is refused by the server, not stored torn.
    func send(_ groups: [[(ContentHash, [UInt8])]]) async throws {
        let client = self.client
        try await withThrowingTaskGroup(of: Void.self) { group in
            for g in groups where !g.isEmpty {
                group.addTask { try await Self.refusedMeansChanged("a file of this batch") { try await client.uploadChunks(named: g) } }
            }
            try await group.waitForAll()
        }
    }

    /// Sends the chunks of `m` the server lacks (`missing`), read from the file at `path` straight
    /// into framed requests, three at a time; `progress` hears the bytes of each finished
    /// request (it hops to its owner itself: this runs on no actor — a closure touching the
    /// engine's state called from here raced the engine's queue and crashed a randomized run). A file that changed meanwhile is refused by the server (its chunks are named by
    /// the hash they should have) and reported as changed, never stored torn.
    func send(_ m: Manifest, from path: String, missing: Set<ContentHash>, progress: @escaping @Sendable (Int) async -> Void) async throws {
        var wanted: [(hash: ContentHash, offset: Int, size: Int)] = []
        var seen = Set<ContentHash>()
        var offset = 0
        for c in m.chunks {
            defer { offset += c.size }
            if missing.contains(c.hash) && seen.insert(c.hash).inserted { wanted.append((c.hash, offset, c.size)) }
        }
        let client = self.client
        try await withThrowingTaskGroup(of: Int.self) { group in
            var running = 0
            for batch in Self.framed(wanted, size: \.size) {
                if running >= Self.requestsAtOnce, let n = try await group.next() { await progress(n); running -= 1 }
                group.addTask {
                    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                    guard fd >= 0 else { throw EngineError(.hashMismatch, "\(path) is gone; it will be sent again if it comes back") }
                    defer { close(fd) }
                    try await Self.refusedMeansChanged(path) {
                        // Read from the file straight into the request body.
                        try await client.uploadChunks(named: batch.map { ($0.hash, $0.size) }) { i, buf in
                            let (_, off, size) = batch[i]
                            var done = 0
                            while done < size {
                                let n = pread(fd, buf.baseAddress! + done, size - done, off_t(off + done))
                                if n < 0 && errno == EINTR { continue }
                                guard n > 0 else { throw EngineError(.hashMismatch, "\(path) changed while uploading; it will be sent again") }
                                done += n
                            }
                        }
                    }
                    return batch.reduce(0) { $0 + $1.size }
                }
                running += 1
            }
            for try await n in group { await progress(n) }
        }
    }

    /// A download window's chunks, each verified: `copied` ones (read from a local file, not yet
    /// checked) are hashed here, and any that no longer match are fetched with the `missing`
    /// ones; `checked` ones are taken as they are.
    func gather(copied: [(ChunkRef, [UInt8])], checked: [ContentHash: [UInt8]], missing: [ChunkRef],
                waitSeconds: Int?) async throws -> [ContentHash: ChunkBytes] {
        var have = checked.mapValues { ChunkBytes.local($0) }
        var missing = missing
        for ((c, bytes), ok) in zip(copied, Self.verify(copied, client.naming)) {
            if ok { have[c.hash] = .local(bytes) } else { missing.append(c) }
        }
        let requests = Self.framed(missing, size: \.size).map { $0.map(\.hash) }
        let fetched = try await fetch(requests, waitSeconds: waitSeconds)
        return have.merging(fetched) { a, _ in a }
    }

    /// Whether each copied chunk still has its name, checked on every core when there is much
    /// to check (a big file rebuilt from the local copy of its last version: on an encrypted
    /// account naming seals each chunk, the rebuild's largest cost).
    static func verify(_ copied: [(ChunkRef, [UInt8])], _ naming: ChunkNaming) -> [Bool] {
        let bytes = copied.reduce(0) { $0 + $1.1.count }
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, copied.count, bytes / (1 << 20) + 1)
        guard workers > 1 else { return copied.map { naming.name($0.1) == $0.0.hash } }
        let out = UnsafeMutableBufferPointer<Bool>.allocate(capacity: copied.count)
        out.initialize(repeating: false)
        defer { out.deallocate() }
        nonisolated(unsafe) let slots = out
        DispatchQueue.concurrentPerform(iterations: workers) { w in
            for i in stride(from: w, to: copied.count, by: workers) { slots[i] = naming.name(copied[i].1) == copied[i].0.hash }
        }
        return Array(out)
    }

    /// Fetches the chunks of `requests` (each one framed request), three requests at a time,
    /// each verified as it arrives.
    func fetch(_ requests: [[ContentHash]], waitSeconds: Int?) async throws -> [ContentHash: ChunkBytes] {
        var have: [ContentHash: ChunkBytes] = [:]
        func keep(_ r: [ContentHash], _ got: FetchedChunks) { for (i, h) in r.enumerated() { have[h] = .fetched(got, i) } }
        let client = self.client
        try await withThrowingTaskGroup(of: ([ContentHash], FetchedChunks).self) { group in
            var running = 0
            for r in requests {
                if running >= Self.requestsAtOnce, let got = try await group.next() { keep(got.0, got.1); running -= 1 }
                group.addTask { (r, try await client.fetchChunks(r, waitSeconds: waitSeconds)) }
                running += 1
            }
            for try await got in group { keep(got.0, got.1) }
        }
        return have
    }

    /// Fetches `chunks` as plain arrays, every request at once (a batch of small files).
    func fetchAll(_ chunks: [ChunkRef]) async throws -> [ContentHash: [UInt8]] {
        var have: [ContentHash: [UInt8]] = [:]
        let client = self.client
        try await withThrowingTaskGroup(of: [(ContentHash, [UInt8])].self) { group in
            for f in Self.framed(chunks, size: \.size) {
                let hashes = f.map(\.hash)
                group.addTask { Array(zip(hashes, try await client.downloadChunks(hashes, waitSeconds: nil))) }
            }
            for try await got in group { for (h, b) in got { have[h] = b } }
        }
        return have
    }

    /// Runs an upload of named chunks: the server refusing one that does not match its name
    /// means the file changed while it was read, reported as such.
    static func refusedMeansChanged(_ path: String, _ upload: () async throws -> Void) async throws {
        do {
            try await upload()
        } catch let e as ClientError where e.code == .hashMismatch {
            throw EngineError(.hashMismatch, "\(path) changed while uploading; it will be sent again")
        }
    }
}
