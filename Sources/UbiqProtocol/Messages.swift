import Foundation
import UbiqCore

/// `POST /v1/login`
public struct LoginRequest: Codable, Sendable {
    public var user: String
    public var password: String
    public var deviceName: String
    /// A device logging in again passes its ID to keep it.
    public var deviceID: DeviceID?
    public init(user: String, password: String, deviceName: String, deviceID: DeviceID? = nil) {
        self.user = user; self.password = password; self.deviceName = deviceName; self.deviceID = deviceID
    }
}

public struct LoginResponse: Codable, Sendable {
    public var token: String
    public var user: String
    public var deviceID: DeviceID
    public var deviceName: String
    public init(token: String, user: String, deviceID: DeviceID, deviceName: String) {
        self.token = token; self.user = user; self.deviceID = deviceID; self.deviceName = deviceName
    }
}

/// One device of the account (`GET /v1/devices`).
public struct DeviceInfo: Codable, Sendable, Equatable {
    public var id: DeviceID
    public var name: String
    public var created: Date
    public var lastSeen: Date
    /// Whether it holds a live token (a revoked device is listed, signed out).
    public var signedIn: Bool
    /// Whether it is the device asking.
    public var current: Bool
    public init(id: DeviceID, name: String, created: Date, lastSeen: Date, signedIn: Bool, current: Bool) {
        self.id = id; self.name = name; self.created = created; self.lastSeen = lastSeen; self.signedIn = signedIn; self.current = current
    }
}

public struct DevicesResponse: Codable, Sendable {
    public var devices: [DeviceInfo]
    public init(devices: [DeviceInfo]) { self.devices = devices }
}

/// `POST /v1/tokens/revoke`: revokes the tokens of `deviceID`, or the caller's own token when nil.
public struct RevokeRequest: Codable, Sendable {
    public var deviceID: DeviceID?
    public init(deviceID: DeviceID? = nil) { self.deviceID = deviceID }
}

/// `GET /v1/account`
public struct AccountInfo: Codable, Sendable, Equatable {
    public var user: String
    public var quota: Int64
    public var used: Int64
    public var device: DeviceID
    public var deviceName: String
    public init(user: String, quota: Int64, used: Int64, device: DeviceID, deviceName: String) {
        self.user = user; self.quota = quota; self.used = used; self.device = device; self.deviceName = deviceName
    }
}

/// `POST /v1/chunks/missing`
public struct MissingChunksRequest: Codable, Sendable {
    public var hashes: [ContentHash]
    public init(hashes: [ContentHash]) { self.hashes = hashes }
}

public struct MissingChunksResponse: Codable, Sendable {
    public var missing: [ContentHash]
    public init(missing: [ContentHash]) { self.missing = missing }
}

/// `POST /v1/containers/{c}/commit`: records an item's new metadata (and the chunk list of its
/// content) before the content has finished uploading; `complete` follows once every chunk is up.
public struct CommitRequest: Codable, Sendable {
    public var itemID: ItemID
    /// The new version's ID, chosen by the device, so a retried commit is recognised.
    public var versionID: VersionID
    public var path: RelativePath
    public var kind: ItemKind
    /// The version this content was based on; nil for a new item.
    public var base: VersionID?
    public var modified: Date
    /// The content (files only).
    public var manifest: Manifest?
    /// Instead of `manifest`: the content as a difference from an earlier version's manifest.
    public var manifestDelta: ManifestDelta?
    /// The folder the device sees at the path's parent (a sync engine's new item). When the
    /// server has another folder there, or has moved or deleted that folder, a new item is
    /// refused with `item_changed`: the device pulls and plans again instead of landing the item
    /// under a path no longer its folder's.
    public var parent: ItemID?
    /// The file's permission bits (`0o000`…`0o777`) as the device has them (files only): other
    /// devices give the file the same (a file private to its owner stays private everywhere).
    public var permissions: Int?
    /// An end-to-end encrypted account's sealed record of the version (`VersionRecord.sealed`;
    /// at most `WireLimits.maxSealedRecordBytes`).
    public var sealed: String?
    /// The generation of `base` as this device knows it (`VersionRecord.generation`): an
    /// encrypted account's record seals the next one. Never on the wire.
    public var baseGeneration: UInt32? = nil

    enum CodingKeys: String, CodingKey {
        case itemID, versionID, path, kind, base, modified, manifest, manifestDelta, parent, permissions, sealed
    }

    public init(itemID: ItemID, versionID: VersionID, path: RelativePath, kind: ItemKind, base: VersionID?, modified: Date, manifest: Manifest?,
                manifestDelta: ManifestDelta? = nil, parent: ItemID? = nil, permissions: Int? = nil, sealed: String? = nil, baseGeneration: UInt32? = nil) {
        self.sealed = sealed
        self.baseGeneration = baseGeneration
        self.itemID = itemID; self.versionID = versionID; self.path = path; self.kind = kind
        self.base = base; self.modified = modified; self.manifest = manifest; self.manifestDelta = manifestDelta; self.parent = parent
        self.permissions = permissions
    }
}

public struct CommitResponse: Codable, Sendable {
    public var outcome: CommitOutcome
    /// The item as it now stands; its ID may differ from the request's when the path was
    /// already taken by another item (the device should adopt this ID).
    public var item: ItemRecord
    /// The version the commit produced or matched (nil for folders).
    public var version: VersionRecord?
    /// Chunks of the content the server still lacks for this account.
    public var missing: [ContentHash]
    public init(outcome: CommitOutcome, item: ItemRecord, version: VersionRecord?, missing: [ContentHash]) {
        self.outcome = outcome; self.item = item; self.version = version; self.missing = missing
    }
}

/// `POST /v1/containers/{c}/commits`: many commits in one request and one server transaction
/// (small files whose chunks were sent first). Each is decided on its own: one refused commit
/// does not undo the others.
public struct CommitBatchRequest: Codable, Sendable {
    public var commits: [CommitRequest]
    public init(commits: [CommitRequest]) { self.commits = commits }
}

/// One commit's answer in a batch: its response, or the error it alone met.
public struct CommitBatchResult: Codable, Sendable {
    public var response: CommitResponse?
    public var error: APIErrorBody.Detail?
    public init(response: CommitResponse?, error: APIErrorBody.Detail?) { self.response = response; self.error = error }
}

public struct CommitBatchResponse: Codable, Sendable {
    /// In the order of the request's commits.
    public var results: [CommitBatchResult]
    public init(results: [CommitBatchResult]) { self.results = results }
}

/// `POST /v1/containers/{c}/manifests`: several versions' chunk lists at once.
public struct ManifestsRequest: Codable, Sendable {
    public var versions: [VersionID]
    public init(versions: [VersionID]) { self.versions = versions }
}

public struct ManifestsResponse: Codable, Sendable {
    /// In the order of the request's versions.
    public var manifests: [Manifest]
    public init(manifests: [Manifest]) { self.manifests = manifests }
}

/// `POST /v1/chunks/fetch`: several chunks in one response, framed as `ChunkFrames` in the
/// order asked. Only chunks the account holds are served; their sizes may add up to
/// `WireLimits.maxChunkBatchBody`.
///
/// With `waitSeconds` (at most `WireLimits.maxFetchWait`) a fetch of chunks the account does
/// not hold yet waits for them as long as the account's uploads keep storing chunks, giving up
/// (`not_found`) only after that long without one: how a device downloads a file that another
/// device is still uploading. In all a fetch waits at most twice `waitSeconds`.
public struct FetchChunksRequest: Codable, Sendable {
    public var hashes: [ContentHash]
    public var waitSeconds: Int?
    public init(hashes: [ContentHash], waitSeconds: Int? = nil) { self.hashes = hashes; self.waitSeconds = waitSeconds }
}

/// The body of `POST /v1/chunks` (upload) and of a `fetch` answer: each chunk as a 4-byte
/// big-endian length and then its bytes. Uploaded chunks are named by the hash of their bytes.
public enum ChunkFrames {
    /// Frames `chunks` into one body.
    public static func encode(_ chunks: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(chunks.reduce(0) { $0 + 4 + $1.count })
        for c in chunks {
            let n = UInt32(c.count)
            out.append(contentsOf: [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)])
            out.append(contentsOf: c)
        }
        return out
    }

    /// The chunks in `body`; nil if the framing is broken, a chunk is empty or larger than
    /// `WireLimits.maxChunkBody`, or there are more than `WireLimits.maxChunksPerBatch`.
    public static func decode<C: Collection>(_ body: C) -> [[UInt8]]? where C.Element == UInt8, C.Index == Int {
        ranges(body).map { $0.map { Array(body[$0]) } }
    }

    /// Like `decode`, but where each chunk lies in `body` (nothing copied).
    public static func ranges<C: Collection>(_ body: C) -> [Range<Int>]? where C.Element == UInt8, C.Index == Int {
        var out: [Range<Int>] = []
        var i = body.startIndex
        while i < body.endIndex {
            guard body.endIndex - i >= 4, out.count < WireLimits.maxChunksPerBatch else { return nil }
            let n = Int(body[i]) << 24 | Int(body[i + 1]) << 16 | Int(body[i + 2]) << 8 | Int(body[i + 3])
            i += 4
            guard n > 0, n <= WireLimits.maxChunkBody, body.endIndex - i >= n else { return nil }
            out.append(i..<i + n)
            i += n
        }
        return out
    }
}

/// The body of an upload (`POST /v1/chunks` with content type `NamedChunkFrames.contentType`)
/// that says what each chunk should hash to: each chunk as its hash (64 hex characters), a
/// 4-byte big-endian length and its bytes. The server stores nothing of a batch in which a chunk
/// does not hash to its name (`hash_mismatch`), so a client need not hash what it reads back
/// from a file to know the server got what it planned.
public enum NamedChunkFrames {
    public static let contentType = "application/vnd.ubiq.named-chunks"

    /// Frames `chunks` into one body.
    public static func encode(_ chunks: [(ContentHash, [UInt8])]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(chunks.reduce(0) { $0 + 68 + $1.1.count })
        for (h, c) in chunks {
            let n = UInt32(c.count)
            h.appendHex(to: &out)
            out.append(contentsOf: [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)])
            out.append(contentsOf: c)
        }
        return out
    }

    /// The named chunks in `body`; nil if the framing is broken, a name is not a hash, a chunk is
    /// empty or larger than `WireLimits.maxChunkBody`, or there are more than
    /// `WireLimits.maxChunksPerBatch`.
    public static func decode<C: Collection>(_ body: C) -> [(ContentHash, [UInt8])]? where C.Element == UInt8, C.Index == Int {
        ranges(body).map { $0.map { ($0.0, Array(body[$0.1])) } }
    }

    /// Like `decode`, but where each chunk lies in `body` (nothing copied).
    public static func ranges<C: Collection>(_ body: C) -> [(ContentHash, Range<Int>)]? where C.Element == UInt8, C.Index == Int {
        var out: [(ContentHash, Range<Int>)] = []
        var i = body.startIndex
        while i < body.endIndex {
            guard body.endIndex - i >= 68, out.count < WireLimits.maxChunksPerBatch,
                  let hash = ContentHash(hexIn: body[i..<i + 64]) else { return nil }
            i += 64
            let n = Int(body[i]) << 24 | Int(body[i + 1]) << 16 | Int(body[i + 2]) << 8 | Int(body[i + 3])
            i += 4
            guard n > 0, n <= WireLimits.maxChunkBody, body.endIndex - i >= n else { return nil }
            out.append((hash, i..<i + n))
            i += n
        }
        return out
    }
}

/// `GET /v1/account/keys`: an end-to-end encrypted account's sealed keys, by name (`recovery`:
/// the account key sealed under the recovery key). Empty for a plain account.
public struct AccountKeysResponse: Codable, Sendable {
    public var keys: [String: String]
    public init(keys: [String: String]) { self.keys = keys }
}

/// `GET /v1/account/containers`: the account's containers that hold items or settings (what
/// `ubiq encrypt` must find on the device that converts the account).
public struct AccountContainersResponse: Codable, Sendable {
    public var containers: [String]
    public init(containers: [String]) { self.containers = containers }
}

/// `PUT /v1/account/keys/{name}`: keeps a sealed key; without `replace`, an existing one is
/// left and the answer is `path_exists`.
/// With `expecting`, it replaces only that value (`item_changed` when another is there: read it
/// again) — how devices change the shared device list without losing each other's changes.
public struct AccountKeyRequest: Codable, Sendable {
    public var value: String
    public var replace: Bool
    public var expecting: String?
    public init(value: String, replace: Bool, expecting: String? = nil) { self.value = value; self.replace = replace; self.expecting = expecting }
}

/// `POST /v1/containers/{c}/items/{id}/move`
public struct MoveRequest: Codable, Sendable {
    public var path: RelativePath
    public init(path: RelativePath) { self.path = path }
}

/// `POST /v1/containers/{c}/items/{id}/resolve`
public struct ResolveRequest: Codable, Sendable {
    public var keep: VersionID
    public init(keep: VersionID) { self.keep = keep }
}

/// `GET /v1/containers/{c}/items/{id}/versions`
public struct VersionsResponse: Codable, Sendable {
    public var item: ItemRecord
    public var current: VersionRecord?
    public var conflicts: [VersionRecord]
    public var others: [VersionRecord]
    public init(item: ItemRecord, current: VersionRecord?, conflicts: [VersionRecord], others: [VersionRecord]) {
        self.item = item; self.current = current; self.conflicts = conflicts; self.others = others
    }
}

/// `GET /v1/containers/{c}/changes?cursor=N&limit=M`: every item changed after `cursor`,
/// in journal order, each as it stands now (deleted ones with `deletedAt`).
public struct ChangesResponse: Codable, Sendable {
    public var items: [ItemRecord]
    public var cursor: Int64
    public var hasMore: Bool
    public init(items: [ItemRecord], cursor: Int64, hasMore: Bool) { self.items = items; self.cursor = cursor; self.hasMore = hasMore }
}

/// `GET /v1/containers/{c}/trash`
public struct TrashResponse: Codable, Sendable {
    public var items: [ItemRecord]
    public init(items: [ItemRecord]) { self.items = items }
}

/// `POST /v1/containers/{c}/trash/empty`: what was purged (no longer restorable).
public struct TrashEmptied: Codable, Sendable, Equatable {
    public var items: Int
    /// Quota given back (chunks no other version of the account uses).
    public var bytes: Int64
    public init(items: Int, bytes: Int64) { self.items = items; self.bytes = bytes }
}

/// `POST /v1/kv/{store}`: an atomic multi-key set (a nil value removes the key).
public struct KVSetRequest: Codable, Sendable {
    public var entries: [KVEntry]
    public init(entries: [KVEntry]) { self.entries = entries }
}

/// `GET /v1/kv/{store}` and `GET /v1/kv/{store}/changes?cursor=N`
public struct KVEntriesResponse: Codable, Sendable {
    /// Entries (tombstones included in change lists, left out of the full listing).
    public var entries: [KVEntry]
    public var cursor: Int64
    public var hasMore: Bool
    public init(entries: [KVEntry], cursor: Int64, hasMore: Bool) { self.entries = entries; self.cursor = cursor; self.hasMore = hasMore }
}

/// Response to a set: the keys whose writes won, and the cursor after the set.
public struct KVSetResponse: Codable, Sendable {
    public var applied: [String]
    public var cursor: Int64
    public init(applied: [String], cursor: Int64) { self.applied = applied; self.cursor = cursor }
}

/// A message on the push channel (`GET /v1/push`, WebSocket, text frames of JSON).
public struct PushMessage: Codable, Sendable, Equatable {
    /// `keys`: the account's sealed keys changed (a device was approved, or the key rolled).
    public enum Kind: String, Codable, Sendable { case hello, changes, kv, keys }
    public var kind: Kind
    /// For `changes`: the container that changed.
    public var container: ContainerID?
    /// For `kv`: the store that changed.
    public var store: String?
    /// The journal cursor after the change.
    public var cursor: Int64
    /// The device whose request caused the change (so it can ignore its own).
    public var origin: DeviceID?
    public init(kind: Kind, container: ContainerID? = nil, store: String? = nil, cursor: Int64, origin: DeviceID? = nil) {
        self.kind = kind; self.container = container; self.store = store; self.cursor = cursor; self.origin = origin
    }
}

/// Size limits every server and client agrees on.
public enum WireLimits {
    /// Largest accepted JSON request body.
    public static let maxJSONBody = 4 << 20
    /// Largest accepted commit body (a manifest of about 600,000 chunks).
    public static let maxCommitBody = 64 << 20
    /// Largest accepted chunk upload.
    public static let maxChunkBody = 1 << 20
    /// The longest sealed version record (`CommitRequest.sealed`).
    public static let maxSealedRecordBytes = 1024
    /// Largest body of a chunk batch (upload or fetch), framing included.
    public static let maxChunkBatchBody = 16 << 20
    /// Most chunks in one batch (upload or fetch).
    public static let maxChunksPerBatch = 4096
    /// Most commits in one batch, and most versions in one manifests query.
    public static let maxCommitsPerBatch = 1000
    /// Most hashes in one missing-chunks query.
    public static let maxHashesPerQuery = 10_000
    /// Most chunks in one manifest.
    public static let maxManifestChunks = 1_000_000
    /// Longest a chunk fetch waits without any chunk arriving (`FetchChunksRequest.waitSeconds`).
    public static let maxFetchWait = 30
    /// Default and largest page of the change feed.
    public static let defaultPage = 500
    public static let maxPage = 5000
    /// A device name is 1...100 bytes.
    public static let maxDeviceNameBytes = 100
    /// A user name is 1...64 bytes of `a-z 0-9 . _ -`.
    public static let maxUserNameBytes = 64
}
