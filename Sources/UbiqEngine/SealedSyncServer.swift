import Foundation
import Logging
import UbiqClient
import UbiqCore
import UbiqProtocol

/// The server as an end-to-end encrypted account's engine sees it: every name in a path sealed
/// on the way out and opened on the way back (`NameCipher`), every chunk sealed before it is
/// uploaded and opened after it is downloaded (`ChunkCipher`), chunks named by the hash of
/// their sealed bytes (`naming`). The engine above works on real names and bytes as it does
/// for a plain account; the server below holds only sealed ones.
///
/// What does not open — a name that is not a sealed name of this account, a chunk that does
/// not open with its key — is `tampered`: reported, and never written into the folder.
///
/// Once the account's key has been rolled (a device revoked), the ring holds several
/// generations: what goes out is sealed with the newest, what comes back opens with the one it
/// was sealed with (a record says its epoch; a chunk is tried newest first, the generation that
/// opened the last one before the others).
public struct SealedSyncServer: SyncServer {
    let inner: any SyncServer
    /// The container's keys; another device's roll updates them while this one runs.
    public let keyring: SharedKeyring
    let hint = EpochHint()
    /// Records this device sealed or opened lately: a version's record comes back in the commit's
    /// answer, the change feed and item look-ups, and each open costs an AES-GCM open and parsing.
    let records = OpenedRecords()

    /// `inner` sealed with `keyring`'s keys, whichever they are at each request.
    public init(inner: any SyncServer, keyring: SharedKeyring) {
        self.inner = inner
        self.keyring = keyring
    }

    /// `inner` sealed with one generation's `keys`.
    public init(inner: any SyncServer, keys: ContainerKeys, container: ContainerID) {
        self.init(inner: inner, keyring: SharedKeyring(ContainerKeyring(keys), container: container))
    }

    var ring: ContainerKeyring { keyring.keys }

    public var naming: ChunkNaming { ChunkNaming(keys: keyring) }

    /// Every chunk it returns opened with the key after its sealed bytes matched their name.
    public var verifiesChunks: Bool { true }

    // MARK: names

    func sealed(_ p: RelativePath) throws -> RelativePath { try ring.identity.names.seal(path: p) }

    func opened(_ r: ItemRecord) throws -> ItemRecord {
        var r = r
        r.path = try ring.identity.names.open(path: r.path)
        r.current = try r.current.map { try opened($0, of: r.id) }
        return r
    }

    func opened(_ r: CommitResponse) throws -> CommitResponse {
        var r = r
        r.item = try opened(r.item)
        r.version = try r.version.map { try opened($0, of: r.item.id) }
        return r
    }

    /// A version of `item` whose sealed record opens there and agrees with it, with the time and
    /// permissions it holds; `tampered` otherwise (a record without one, or one sealed for
    /// another item, included).
    func opened(_ v: VersionRecord, of item: ItemID) throws -> VersionRecord {
        guard let s = v.sealed else { throw CoreError(.tampered, "the server sent version \(v.id) without its sealed record") }
        let f = try records.fields(s, version: v.id, item: item) ?? {
            let f = try RecordCipher(ring: ring).open(s, version: v.id, item: item)
            records.note(s, version: v.id, item: item, f)
            return f
        }()
        guard f.hash == v.hash, f.size == v.size else {
            throw CoreError(.tampered, "the server sent version \(v.id) with another content than the one committed")
        }
        var v = v
        v.modified = f.modified
        v.permissions = f.permissions
        v.generation = f.generation
        return v
    }

    func sealed(_ c: CommitRequest) throws -> CommitRequest {
        var c = c
        c.path = try sealed(c.path)
        if c.kind == .file, let (hash, size) = c.manifest.map({ ($0.hash, $0.size) }) ?? c.manifestDelta.map({ ($0.hash, $0.size) }) {
            let generation = c.base == nil ? 1 : (c.baseGeneration ?? 0) &+ 1
            let f = RecordCipher.Fields(modified: c.modified, permissions: c.permissions, hash: hash, size: size, generation: max(1, generation))
            let sealed = RecordCipher(ring: ring).seal(f, version: c.versionID, item: c.itemID)
            records.note(sealed, version: c.versionID, item: c.itemID, f)
            c.sealed = sealed
            // In the clear: when it was committed (the server knows that anyway), no permissions.
            c.modified = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            c.permissions = nil
        }
        return c
    }

    // MARK: the change feed and the push channel

    public func changes(_ container: ContainerID, after cursor: Int64, limit: Int) async throws -> ChangesResponse {
        var r = try await inner.changes(container, after: cursor, limit: limit)
        let names = ring.identity.names
        r.items = try r.items.compactMap { item in
            // A deleted item whose name is no sealed name of the account was deleted before the
            // account was encrypted (`ubiq encrypt` purges the plain ones): nothing to place or
            // remove. Passed on, its plain path could name a real folder here.
            if item.deletedAt != nil, (try? names.open(path: item.path)) == nil { return nil }
            return try opened(item)
        }
        return r
    }

    public func listen(logger: Logger, onMessage: @escaping @Sendable (PushMessage) async -> Void) async throws {
        try await inner.listen(logger: logger, onMessage: onMessage)
    }

    // MARK: versions and items

    public func commit(_ container: ContainerID, _ request: CommitRequest) async throws -> CommitResponse {
        let request = try await knowingBase(request, in: container)
        do {
            return try opened(try await inner.commit(container, try sealed(request)))
        } catch let refused as ClientError {
            guard let again = Self.joining(request, refusedWith: refused.code, item: refused.item) else { throw refused }
            return try opened(try await inner.commit(container, try sealed(again)))
        }
    }

    public func commitMany(_ container: ContainerID, _ requests: [CommitRequest]) async throws -> [CommitBatchResult] {
        var requests = requests
        for i in requests.indices { requests[i] = try await knowingBase(requests[i], in: container) }
        var results = try await inner.commitMany(container, try requests.map(sealed))
        guard results.count == requests.count else { throw CoreError(.badResponse, "a commit batch was answered with \(results.count) results for \(requests.count)") }
        for (i, request) in requests.enumerated() {
            if let e = results[i].error, let again = Self.joining(request, refusedWith: e.code, item: e.item) {
                do {
                    results[i] = CommitBatchResult(response: try await inner.commit(container, try sealed(again)), error: nil)
                } catch let refused as ClientError {
                    results[i] = CommitBatchResult(response: nil, error: .init(code: refused.code, message: refused.message))
                }
            }
            results[i].response = try results[i].response.map(opened)
        }
        return results
    }

    /// `c` with its base's generation known (the record seals the next one): as the engine gave
    /// it, else read from the base's own record on the server — one round trip, for an engine
    /// that heard of the base before generations were kept, or whose base is no longer current.
    func knowingBase(_ c: CommitRequest, in container: ContainerID) async throws -> CommitRequest {
        guard c.kind == .file, let base = c.base, c.baseGeneration == nil else { return c }
        var c = c
        do {
            let list = try await versions(container, item: c.itemID)
            c.baseGeneration = ([list.current].compactMap { $0 } + list.conflicts + list.others).first { $0.id == base }?.generation ?? 0
        } catch let e as ClientError where e.code == .notFound {
            c.baseGeneration = 0
        }
        return c
    }

    /// A new file the server refused because another device's file has its path (`item`): the
    /// same commit made to that item, whose record is then sealed for it — what the server does
    /// itself for a plain account (one path, one document: the version becomes that item's
    /// next one or a conflict of it). Nil when the refusal is anything else.
    static func joining(_ request: CommitRequest, refusedWith code: ErrorCode, item: ItemID?) -> CommitRequest? {
        guard code == .pathExists, let item, item != request.itemID, request.kind == .file, request.base == nil else { return nil }
        var again = request
        again.itemID = item
        again.parent = nil
        return again
    }

    public func complete(_ container: ContainerID, version: VersionID) async throws -> ItemRecord {
        try opened(try await inner.complete(container, version: version))
    }

    public func move(_ container: ContainerID, item: ItemID, to path: RelativePath) async throws -> ItemRecord {
        try opened(try await inner.move(container, item: item, to: try sealed(path)))
    }

    public func move(_ container: ContainerID, item: ItemID, to path: RelativePath, into parent: ItemID) async throws -> ItemRecord {
        try opened(try await inner.move(container, item: item, to: try sealed(path), into: parent))
    }

    public func delete(_ container: ContainerID, item: ItemID) async throws -> ItemRecord {
        try opened(try await inner.delete(container, item: item))
    }

    public func delete(_ container: ContainerID, item: ItemID, unchangedSince since: Int64) async throws -> ItemRecord {
        try opened(try await inner.delete(container, item: item, unchangedSince: since))
    }

    public func restore(_ container: ContainerID, item: ItemID) async throws -> ItemRecord {
        try opened(try await inner.restore(container, item: item))
    }

    public func versions(_ container: ContainerID, item: ItemID) async throws -> VersionsResponse {
        var r = try await inner.versions(container, item: item)
        guard r.item.id == item else { throw CoreError(.tampered, "the server answered for item \(r.item.id) when asked for the versions of \(item)") }
        r.item = try opened(r.item)
        let item = r.item.id
        r.current = try r.current.map { try opened($0, of: item) }
        r.conflicts = try r.conflicts.map { try opened($0, of: item) }
        r.others = try r.others.map { try opened($0, of: item) }
        return r
    }

    /// Keeping the current version, or a conflict version as new as it, is the server's resolve.
    /// Keeping an older one commits its content again as the newest version (its chunks are on
    /// the server: nothing travels), then clears the conflicts: the server's own promotion would
    /// show an older generation as current, which every device refuses as a rollback
    /// (`RollbackCheck`).
    public func resolve(_ container: ContainerID, item: ItemID, keep: VersionID) async throws -> ItemRecord {
        let list = try await versions(container, item: item)
        guard let current = list.current, current.id != keep, let kept = (list.conflicts + list.others).first(where: { $0.id == keep }),
              (kept.generation ?? 0) < (current.generation ?? 0) else {
            return try opened(try await inner.resolve(container, item: item, keep: keep))
        }
        guard kept.uploaded else { throw CoreError(.incompleteContent, "version \(keep) has not finished uploading") }
        let request = CommitRequest(itemID: item, versionID: VersionID(uuid: UUID()), path: list.item.path, kind: .file, base: current.id,
                                    modified: kept.modified, manifest: try await inner.manifest(container, version: keep), permissions: kept.permissions,
                                    baseGeneration: current.generation ?? 0)
        let r = try await commit(container, request)
        guard r.outcome == .updated || r.outcome == .unchanged, let now = r.item.current else {
            throw CoreError(.itemChanged, "\(list.item.path) changed while version \(keep) was being kept; look at its versions again")
        }
        guard r.item.conflictCount > 0 else { return r.item }
        return try opened(try await inner.resolve(container, item: item, keep: now.id))
    }

    public func trash(_ container: ContainerID) async throws -> TrashResponse {
        var r = try await inner.trash(container)
        r.items = try r.items.map(opened)
        return r
    }

    public func emptyTrash(_ container: ContainerID) async throws -> TrashEmptied { try await inner.emptyTrash(container) }

    // MARK: manifests (chunk names are already the sealed chunks' names)

    public func manifest(_ container: ContainerID, version: VersionID) async throws -> Manifest {
        try await inner.manifest(container, version: version)
    }

    public func manifests(_ container: ContainerID, versions: [VersionID]) async throws -> [Manifest] {
        try await inner.manifests(container, versions: versions)
    }

    public func manifestDelta(_ container: ContainerID, version: VersionID, base: VersionID) async throws -> ManifestDelta {
        try await inner.manifestDelta(container, version: version, base: base)
    }

    // MARK: chunks

    public func missingChunks(_ hashes: [ContentHash]) async throws -> [ContentHash] { try await inner.missingChunks(hashes) }

    public func uploadChunks(named chunks: [(ContentHash, [UInt8])]) async throws {
        let ring = self.ring
        try await inner.uploadChunks(named: chunks.map { c in (c.0, Array(c.1.withUnsafeBytes { Self.sealed($0, named: c.0, ring) })) })
    }

    public func uploadChunks(named chunks: [(hash: ContentHash, size: Int)], fill: (Int, UnsafeMutableRawBufferPointer) throws -> Void) async throws {
        let ring = self.ring
        // One buffer for every chunk of the batch, as big as the biggest (zeroed once, by the
        // runtime's memset — an element-wise append is slow in an unoptimised build).
        var plain = [UInt8](repeating: 0, count: chunks.map(\.size).max() ?? 0)
        try await inner.uploadChunks(named: chunks.map { ($0.hash, $0.size + ChunkCipher.overhead) }) { i, out in
            let size = chunks[i].size
            try plain.withUnsafeMutableBytes { all in
                let mine = UnsafeMutableRawBufferPointer(rebasing: all[..<size])
                try fill(i, mine)
                // Sealed (or kept from the naming) straight into the request: no copy between.
                Self.sealed(UnsafeRawBufferPointer(mine), named: chunks[i].hash, ring).withUnsafeBytes { out.copyMemory(from: $0) }
            }
        }
    }

    /// The sealed bytes of the chunk `plain` named `name`: with the newest key — or, on a ring
    /// of several generations, with the one whose sealing gives that name (the chunk was named
    /// before a roll reached this device); the server refuses bytes that do not match.
    static func sealed(_ plain: UnsafeRawBufferPointer, named name: ContentHash, _ ring: ContainerKeyring) -> Data {
        let all = ring.newestFirst
        for k in all { if let kept = k.chunks.takeKept(name) { return kept } }
        let now = all[0].chunks.sealedData(plain)
        guard all.count > 1, now.withUnsafeBytes({ ContentHash.of(buffer: $0) }) != name else { return now }
        for k in all.dropFirst() {
            let s = k.chunks.sealedData(plain)
            if s.withUnsafeBytes({ ContentHash.of(buffer: $0) }) == name { return s }
        }
        return now
    }

    /// The chunk `sealed` holds, once its bytes are the ones named `hash` (another chunk of the
    /// account would open with its key too) and open with a key of the ring.
    func opened(_ sealed: UnsafeRawBufferPointer, _ hash: ContentHash) throws -> Data {
        guard inner.verifiesChunks || ContentHash.of(buffer: sealed) == hash else { throw CoreError(.tampered, "the server sent other bytes for chunk \(hash.hex.prefix(12))") }
        let all = ring.newestFirst
        if all.count == 1 { return try all[0].chunks.openData(sealed) }
        let first = hint.epoch
        for k in all.sorted(by: { ($0.epoch == first ? 1 : 0) > ($1.epoch == first ? 1 : 0) }) {
            if let plain = try? k.chunks.openData(sealed) {
                hint.epoch = k.epoch
                return plain
            }
        }
        throw CoreError(.tampered, "chunk \(hash.hex.prefix(12)) opens with none of this device's keys (epochs \(ring.epochs.map(String.init).joined(separator: ", ")))")
    }

    public func downloadChunk(_ hash: ContentHash) async throws -> [UInt8] {
        let sealed = try await inner.downloadChunk(hash)
        return Array(try sealed.withUnsafeBytes { try opened($0, hash) })
    }

    public func downloadChunks(_ hashes: [ContentHash], waitSeconds: Int?) async throws -> [[UInt8]] {
        let got = try await inner.downloadChunks(hashes, waitSeconds: waitSeconds)
        guard got.count == hashes.count else { throw CoreError(.tampered, "the server sent \(got.count) chunks for \(hashes.count)") }
        return try zip(got, hashes).map { c, h in Array(try c.withUnsafeBytes { try opened($0, h) }) }
    }

    public func fetchChunks(_ hashes: [ContentHash], waitSeconds: Int?) async throws -> FetchedChunks {
        let got = try await inner.fetchChunks(hashes, waitSeconds: waitSeconds)
        guard got.count == hashes.count else { throw CoreError(.tampered, "the server sent \(got.count) chunks for \(hashes.count)") }
        return FetchedChunks(pieces: try (0..<got.count).map { i in try got.withBytes(i) { try opened($0, hashes[i]) } })
    }
}

/// Sealed records and what they hold, for records this device sealed or opened lately (emptied
/// when full). A record is found only for the version and item it was sealed for: what the
/// server files elsewhere is opened, and refused, as before.
final class OpenedRecords: @unchecked Sendable {
    private let lock = NSLock()
    private var known: [String: (version: VersionID, item: ItemID, fields: RecordCipher.Fields)] = [:]
    static let limit = 8_192

    func fields(_ sealed: String, version: VersionID, item: ItemID) -> RecordCipher.Fields? {
        lock.withLock {
            guard let k = known[sealed], k.version == version, k.item == item else { return nil }
            return k.fields
        }
    }

    func note(_ sealed: String, version: VersionID, item: ItemID, _ fields: RecordCipher.Fields) {
        lock.withLock {
            if known.count >= Self.limit { known.removeAll(keepingCapacity: true) }
            known[sealed] = (version, item, fields)
        }
    }
}

/// The key generation that opened the last chunk: tried first for the next one.
final class EpochHint: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    var epoch: Int {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
