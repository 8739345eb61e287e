import Foundation
import UbiqCore

/// Who is making a request: resolved from a device token.
public struct AuthContext: Sendable, Equatable {
    public let accountID: Int64
    public let user: String
    public let deviceID: DeviceID
    public let deviceName: String
    public init(accountID: Int64, user: String, deviceID: DeviceID, deviceName: String) {
        self.accountID = accountID; self.user = user; self.deviceID = deviceID; self.deviceName = deviceName
    }
}

/// An account's stored password verifier (PBKDF2-SHA256).
public struct PasswordRecord: Sendable, Equatable {
    public let salt: [UInt8]
    public let iterations: Int
    public let derived: [UInt8]
    public init(salt: [UInt8], iterations: Int, derived: [UInt8]) { self.salt = salt; self.iterations = iterations; self.derived = derived }
}

/// An account as stored.
public struct AccountRecord: Sendable, Equatable {
    public let id: Int64
    public let name: String
    public let password: PasswordRecord
    public let quota: Int64
    public let used: Int64
}

/// A commit as the store takes it (the server maps the wire request onto it).
public struct CommitInput: Sendable {
    public var itemID: ItemID
    public var versionID: VersionID
    public var path: RelativePath
    public var kind: ItemKind
    public var base: VersionID?
    public var modified: Date
    public var manifest: Manifest?
    /// See `CommitRequest.parent`: checked when the commit makes a new item.
    public var parent: ItemID?
    /// See `CommitRequest.permissions` (checked to be 0…0o777).
    public var permissions: Int?
    /// See `CommitRequest.sealed`.
    public var sealed: String?
    public init(itemID: ItemID, versionID: VersionID, path: RelativePath, kind: ItemKind, base: VersionID?, modified: Date, manifest: Manifest?,
                parent: ItemID? = nil, permissions: Int? = nil, sealed: String? = nil) {
        self.sealed = sealed
        self.itemID = itemID; self.versionID = versionID; self.path = path; self.kind = kind
        self.base = base; self.modified = modified; self.manifest = manifest; self.parent = parent
        self.permissions = permissions
    }
}

/// What a commit did.
public struct CommitResult: Sendable {
    public let outcome: CommitOutcome
    public let item: ItemRecord
    public let version: VersionRecord?
    public let missing: [ContentHash]
    /// The journal cursor after the commit (for push notifications).
    public let cursor: Int64
}

/// An item change with the cursor after it (for push notifications).
public struct ItemChange: Sendable {
    public let item: ItemRecord
    public let cursor: Int64
}

/// A page of the change journal.
public struct ChangePage: Sendable {
    public let items: [ItemRecord]
    public let cursor: Int64
    public let hasMore: Bool
}

/// An item's versions, grouped.
public struct VersionList: Sendable {
    public let item: ItemRecord
    public let current: VersionRecord?
    public let conflicts: [VersionRecord]
    public let others: [VersionRecord]
}

/// A page of key-value entries.
public struct KVPage: Sendable {
    public let entries: [KVEntry]
    public let cursor: Int64
    public let hasMore: Bool
}

/// Accounts, devices and tokens.
public protocol AccountStore: Sendable {
    /// Creates an account; `user_exists` if the name is taken.
    func createAccount(name: String, password: PasswordRecord, quota: Int64, now: Date) async throws -> AccountRecord
    func account(named name: String) async throws -> AccountRecord?
    /// Registers (or renames) a device and stores a new token for it (only the token's hash is kept).
    func createSession(accountID: Int64, deviceID: DeviceID, deviceName: String, tokenHash: String, now: Date) async throws -> AuthContext
    /// The context of a live token, or nil.
    func authenticate(tokenHash: String, now: Date) async throws -> AuthContext?
    /// Which of `hashes` are still a signed-in device's tokens (as `authenticate` would find
    /// them): the push channels' one look for revocations made anywhere (another server, the
    /// `ubiq server` commands), a few statements for any number of channels.
    func liveTokens(among hashes: [String]) async throws -> Set<String>
    /// Revokes one token by its hash.
    func revoke(tokenHash: String) async throws
    /// Revokes every token of one of the account's devices; false if the device is not the account's.
    func revokeDevice(accountID: Int64, deviceID: DeviceID) async throws -> Bool
}

/// An account as an administrator lists it.
public struct AccountSummary: Sendable, Equatable {
    public let name: String
    public let quota: Int64
    public let used: Int64
    /// Devices with a live token.
    public let devices: Int
    public let created: Date
}

/// A device of an account as stored.
public struct DeviceRecord: Sendable, Equatable {
    public let id: DeviceID
    public let name: String
    public let created: Date
    public let lastSeen: Date
    /// Whether it has a live token (a revoked device is kept, signed out).
    public let signedIn: Bool
}

/// What an administrator does to accounts (`ubiq server user …`, `ubiq server device …`).
public protocol AccountAdminStore: Sendable {
    func accounts() async throws -> [AccountSummary]
    /// Replaces an account's password; with `signOut`, every device's tokens go too. False if
    /// there is no such account.
    func setPassword(name: String, password: PasswordRecord, signOut: Bool) async throws -> Bool
    /// Sets an account's quota; false if there is no such account.
    func setQuota(name: String, quota: Int64) async throws -> Bool
    /// Deletes an account with everything it holds (items, versions, settings, devices,
    /// tokens); false if there is no such account.
    func deleteAccount(name: String) async throws -> Bool
    /// The account's devices, most recently seen first.
    func devices(accountID: Int64) async throws -> [DeviceRecord]
}

/// Which chunks each account holds (knowing a hash grants nothing) and quota usage.
public protocol ChunkOwnershipStore: Sendable {
    /// The hashes among `hashes` the account has not uploaded.
    func missingChunks(accountID: Int64, hashes: [ContentHash]) async throws -> [ContentHash]
    /// Records that the account holds a chunk; `storage_full` when it would pass the quota.
    func recordChunk(accountID: Int64, hash: ContentHash, size: Int, now: Date) async throws
    /// Records several chunks in one transaction; `storage_full` (nothing recorded) when together
    /// they would pass the quota.
    func recordChunks(accountID: Int64, _ chunks: [(hash: ContentHash, size: Int)], now: Date) async throws
    /// True if the account has uploaded this chunk.
    func ownsChunk(accountID: Int64, hash: ContentHash) async throws -> Bool
    /// Whether the account holds the chunk, with its quota and usage, read together (one
    /// statement where the store can: a chunk's upload asks all three).
    func chunkStanding(accountID: Int64, hash: ContentHash) async throws -> (owned: Bool, quota: Int64, used: Int64)
    /// Quota and usage.
    func usage(accountID: Int64) async throws -> (quota: Int64, used: Int64)
    /// How many more entries (chunk references, versions, folders) the account may hold (`ChunkReferenceBudget`).
    func referenceRoom(accountID: Int64) async throws -> Int64
}

/// What garbage collection asks of the metadata: which stored chunks are still wanted, and
/// giving back uploads that were never committed.
public protocol ChunkLivenessStore: Sendable {
    /// Those of `hashes` that some account holds or some version lists (a chunk either way is
    /// kept).
    func liveChunks(among hashes: [ContentHash]) async throws -> Set<ContentHash>
    /// Releases every chunk an account uploaded before `cutoff` that no version of the account
    /// lists (an upload whose commit never came), giving its size back to the account's usage;
    /// with `dryRun` only counts them. Returns how many chunks and bytes.
    func releaseUncommitted(uploadedBefore cutoff: Date, dryRun: Bool) async throws -> (chunks: Int, bytes: Int64)
}

/// Containers, items, versions, trash and the change journal.
public protocol ItemStore: Sendable {
    func commit(_ ctx: AuthContext, container: ContainerID, _ input: CommitInput, now: Date) async throws -> CommitResult
    /// Several commits in one transaction, each decided on its own (a failing one is rolled back
    /// alone and answered with its error).
    func commitMany(_ ctx: AuthContext, container: ContainerID, _ inputs: [CommitInput], now: Date) async throws -> [Result<CommitResult, StorageError>]
    /// Marks a version's content as fully uploaded once the account holds every chunk.
    func complete(_ ctx: AuthContext, container: ContainerID, version: VersionID, now: Date) async throws -> ItemChange
    func move(_ ctx: AuthContext, container: ContainerID, item: ItemID, to path: RelativePath, now: Date) async throws -> ItemChange
    /// A sync engine's move: with `into`, `item_changed` unless the live folder at the new parent
    /// path is that item (a device whose view of the folders is out of date never lands an item
    /// in another folder of the same name, nor invents or revives one).
    func move(_ ctx: AuthContext, container: ContainerID, item: ItemID, to path: RelativePath, into parentID: ItemID?, now: Date) async throws -> ItemChange
    func delete(_ ctx: AuthContext, container: ContainerID, item: ItemID, now: Date) async throws -> ItemChange
    /// A sync engine's delete: `item_changed` if the item, or any live item under a folder, changed
    /// after change-journal position `unchangedSince` (the device's cursor). A device never
    /// deletes what it has not seen: an edit, a rename, or an item another device moved in meanwhile.
    func delete(_ ctx: AuthContext, container: ContainerID, item: ItemID, unchangedSince: Int64, now: Date) async throws -> ItemChange
    func restore(_ ctx: AuthContext, container: ContainerID, item: ItemID, now: Date) async throws -> ItemChange
    func versions(_ ctx: AuthContext, container: ContainerID, item: ItemID) async throws -> VersionList
    func resolve(_ ctx: AuthContext, container: ContainerID, item: ItemID, keep: VersionID, now: Date) async throws -> ItemChange
    func manifest(_ ctx: AuthContext, container: ContainerID, version: VersionID) async throws -> Manifest
    /// Several versions' manifests in one read, in order; `not_found` if any is unknown.
    func manifests(_ ctx: AuthContext, container: ContainerID, versions: [VersionID]) async throws -> [Manifest]
    func changes(_ ctx: AuthContext, container: ContainerID, after cursor: Int64, limit: Int) async throws -> ChangePage
    func trash(_ ctx: AuthContext, container: ContainerID) async throws -> [ItemRecord]
    /// Purges every item of the container's trash now; how many items and bytes given back.
    func emptyTrash(_ ctx: AuthContext, container: ContainerID) async throws -> (items: Int, bytes: Int64)
    /// Purges the items of every account that went to the trash before `cutoff`, giving back the
    /// space only they used (see `SQLMetadataStore+Release.swift`).
    func purgeTrash(deletedBefore cutoff: Date) async throws -> (items: Int, bytes: Int64)
}

/// The synced key-value store.
public protocol KeyValueStore: Sendable {
    /// Every live entry and the current cursor.
    func kvAll(_ ctx: AuthContext, store: ContainerID) async throws -> KVPage
    /// Entries changed after `cursor`, whole sets at a time, tombstones included.
    func kvChanges(_ ctx: AuthContext, store: ContainerID, after cursor: Int64, limit: Int) async throws -> KVPage
    /// Applies an atomic multi-key set by last-writer-wins; limits are checked on the result
    /// and a violation stores nothing. Returns the winning keys and the new cursor.
    func kvSet(_ ctx: AuthContext, store: ContainerID, entries: [KVEntry], now: Date) async throws -> (applied: [String], cursor: Int64)
    /// A key's last writes, newest first (a delete has no value): at most
    /// `KVLimits.historyPerKey`, fewer when the store's history outgrew `KVLimits.maxHistoryBytes`
    /// or the values pass 2 MiB (the newest always comes).
    func kvHistory(_ ctx: AuthContext, store: ContainerID, key: String) async throws -> [KVEntry]
}

/// Everything the server needs from its metadata database (`SQLMetadataStore`, on SQLite or
/// PostgreSQL: routes do not know which).
public typealias MetadataStore = AccountStore & ChunkOwnershipStore & ItemStore & AccountKeyStore

/// An end-to-end encrypted account's sealed keys (the account key under the recovery key, and
/// later under each device's key): opaque text the server keeps and hands back to the account's
/// devices, never able to open it.
public protocol AccountKeyStore: Sendable {
    /// Every sealed key of the account, by name.
    func accountKeys(accountID: Int64) async throws -> [String: String]
    /// One sealed key of the account, if kept.
    func accountKey(accountID: Int64, name: String) async throws -> String?
    /// Stores `value` as `name`; with `replace` false, leaves an existing one and returns false;
    /// with `expecting`, replaces only the value it names (read-modify-write without losing a
    /// concurrent writer's change) and returns false when the current one is another.
    /// `invalid_value` past `AccountKeyLimits`.
    func putAccountKey(accountID: Int64, name: String, value: String, replace: Bool, expecting: String?, now: Date) async throws -> Bool
    /// Removes a sealed key; false when there was none.
    func deleteAccountKey(accountID: Int64, name: String) async throws -> Bool
    /// The account's containers that hold items (in the trash too) or settings, by name.
    func containerNames(accountID: Int64) async throws -> [String]
}

extension AccountKeyStore {
    /// An encrypted account's newest key generation, as its device list says (nil: none — a
    /// plain account, or one encrypted before lists). One row read.
    public func keyGeneration(accountID: Int64) async throws -> Int? {
        try await accountKey(accountID: accountID, name: DeviceKeyList.serverName).flatMap(DeviceKeyList.epoch(of:))
    }
}

/// How many sealed keys an account keeps, and how big.
public enum AccountKeyLimits {
    public static let maxKeys = 256
    public static let maxNameBytes = 64
    public static let maxValueBytes = 16 << 10

    /// True for a name of 1 to 64 lower-case letters, digits, `.` and `-`.
    public static func validName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maxNameBytes && name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D }
    }
}
