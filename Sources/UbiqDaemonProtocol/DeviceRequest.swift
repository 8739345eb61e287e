import Foundation
import UbiqCore
import UbiqProtocol

/// What a `ubiq` command asks of a device's engine: answered in-process when no daemon runs,
/// else by the daemon over its socket (one JSON line each way; streams send several).
public enum DeviceRequest: Codable, Sendable, Equatable {
    /// Who the daemon is (``DaemonHello``): a program's first question. `version` is the
    /// protocol version the program speaks; `client` names it in the daemon's log.
    case hello(version: Int, client: String? = nil)
    /// A stream whose first line is the `hello` answer (with `ready`) and that lasts as long as
    /// the daemon: its end tells a program the daemon has stopped (sign-out stops it).
    case watchIdentity
    /// Sends settings written on this device and fetches others' now (answer: `ok`, and
    /// `savedLocally` when the server could not be reached).
    case kvSync
    /// Holds the paths under coordination (`writing`: a program writes them; else it reads):
    /// a `ready` line once they are held, then nothing until the program closes the connection,
    /// which lets go (see ``Coordination``).
    case coordinate(paths: [String], writing: Bool)
    /// The containers this device syncs (answer: `containers`).
    case containers
    case status
    case sync
    /// A one-shot metadata query (`ubiq ls`).
    case list(query: QuerySpec)
    /// A live metadata query (`ubiq ls --watch`): a stream of events until the client leaves.
    case watch(query: QuerySpec)
    case versions(path: String)
    case resolve(path: String, keep: String)
    /// Keep the current version; each conflict version becomes a document beside it.
    case keepBoth(path: String)
    /// A three-way merge of a text conflict (`version`: which conflict version; nil: the only
    /// one), to be looked at before it is kept with `keepMerge`.
    case mergeDraft(path: String, version: String?)
    /// Keeps `text` (a draft's merged text, perhaps edited) as the document's current version.
    case keepMerge(draft: MergeDraft, text: String)
    /// Rename an item in its folder; make a new folder.
    case rename(path: String, name: String)
    case makeFolder(path: String)
    case download(paths: [String])
    case evict(paths: [String])
    /// Cancels the downloads of the items (see `SyncEngine.cancelTransfers`).
    case cancel(paths: [String])
    /// Keeps the items on this device (`on`), or stops keeping them (see `SyncEngine.pin`).
    case pin(paths: [String], on: Bool)
    /// Tries failing items again now (all failing items when `paths` is empty).
    case retry(paths: [String])
    /// Pauses syncing (`true`) or resumes it, until the engine restarts.
    case pause(on: Bool)
    /// Holds (or lets go) the transfers of the files at or under the paths.
    case hold(paths: [String], on: Bool)
    case remove(paths: [String])
    case trash
    case restore(path: String)
    /// Purges the trash now (`ubiq trash empty`).
    case emptyTrash
    /// The key-value store: every key, one key, an atomic set (nil removes), external changes.
    case kvList
    case kvGet(key: String)
    /// A key's last writes (answer: `kv`, newest first, and `devices` to name the writers).
    case kvHistory(key: String)
    /// `origin`: the writing program's tag (see `kvWatch`).
    case kvSet(values: [String: KVValue?], origin: String? = nil)
    /// Changes from elsewhere; with `local`, this device's own writes by other programs too
    /// (those whose `kvSet` carries the same tag are the watcher's own and left out).
    case kvWatch(local: String? = nil)
    /// The account's devices (names for the settings' "changed by").
    case devices
    /// `ubiq rekey`: what was sealed with an older generation of an encrypted account's key
    /// sealed again with the newest (documents as new versions, settings written again).
    case rekey
    /// The first `limit` bytes of one version's content (previews).
    case versionContent(path: String, version: String, limit: Int, offset: Int? = nil)
    /// On an encrypted account: lets in the new device that shows `code` (`ubiq devices
    /// approve`, `:approve` in the front end); the answer's message names it.
    case approveDevice(code: String)
}

/// A metadata query as the command line states it.
public struct QuerySpec: Codable, Sendable, Equatable {
    public var predicate: String?
    public var scope: String
    public var sort: String
    /// Batching interval of updates, in milliseconds.
    public var intervalMillis: Int
    public init(predicate: String? = nil, scope: String = "data", sort: String = "name", intervalMillis: Int = 100) {
        self.predicate = predicate; self.scope = scope; self.sort = sort; self.intervalMillis = intervalMillis
    }

    enum CodingKeys: String, CodingKey { case predicate, scope, sort, intervalMillis }

    /// From the socket, every argument may be left out (#45 §2: a program that sent only a
    /// predicate was told `'scope' missing`): no predicate (everything), `scope` `documents`
    /// (the seeds' default search scope), `sort` `name`, `intervalMillis` 100.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(predicate: try c.decodeIfPresent(String.self, forKey: .predicate),
                  scope: try c.decodeIfPresent(String.self, forKey: .scope) ?? "documents",
                  sort: try c.decodeIfPresent(String.self, forKey: .sort) ?? "name",
                  intervalMillis: try c.decodeIfPresent(Int.self, forKey: .intervalMillis) ?? 100)
    }
}

/// The engine's answer. Streamed answers carry `event`; the last line of every answer has none.
public struct DeviceResponse: Codable, Sendable {
    public var ok: Bool
    public var message: String?
    /// A refusal's stable code (an ``ErrorCode`` raw value, e.g. `server_unreachable`) when the
    /// engine knows one: programs branch on it, never on the message's words. Kept as text on
    /// the wire, so a code a newer daemon adds does not make the answer unreadable.
    public var code: String?
    public var status: EngineStatus?
    public var items: [MetadataItem]?
    public var versions: VersionsResponse?
    /// A merge to look at (`mergeDraft`).
    public var merge: MergeDraft?
    public var item: ItemRecord?
    public var trash: [ItemRecord]?
    /// What `emptyTrash` purged.
    public var emptied: TrashEmptied?
    public var results: [PathResult]?
    public var event: QueryEventLine?
    public var kv: [KVEntry]?
    public var devices: [DeviceInfo]?
    public var kvChange: SettingsChange?
    /// Content bytes (`versionContent`).
    public var content: Data?
    /// Set when a write is stored on this device but the server could not be reached yet.
    public var savedLocally: Bool?

    /// The first line of a `kvWatch` stream: from here on every external change is reported.
    public var ready: Bool?
    /// The answer to `hello`.
    public var hello: DaemonHello?
    /// The answer to `containers`.
    public var containers: [ContainerState]?

    /// ``code`` as an ``ErrorCode`` (nil: none, or one this program does not know).
    public var errorCode: ErrorCode? { code.flatMap(ErrorCode.init(rawValue:)) }

    /// True for the lines of a stream (every line but the last).
    public var isStreamEvent: Bool { event != nil || kvChange != nil || ready == true }

    public init(ok: Bool, message: String? = nil, status: EngineStatus? = nil) { self.ok = ok; self.message = message; self.status = status }
}

/// One streamed query event, as `ubiq ls --watch --json` prints it.
public struct QueryEventLine: Codable, Sendable, Equatable {
    /// `gathered` (the first, complete result) or `update`.
    public var event: String
    public var added: [MetadataItem]
    public var changed: [MetadataItem]
    public var removed: [MetadataItem]
    public init(event: String, added: [MetadataItem], changed: [MetadataItem], removed: [MetadataItem]) {
        self.event = event; self.added = added; self.changed = changed; self.removed = removed
    }
}

/// What happened to one path of a multi-path command (`download`, `evict`, `rm`).
public struct PathResult: Codable, Sendable, Equatable {
    public var path: String
    /// nil when it worked; otherwise one line saying why not.
    public var error: String?
    public init(path: String, error: String? = nil) { self.path = path; self.error = error }
}

/// Who answers on a daemon's socket: the protocol it speaks and the account, device and
/// container it syncs.
public struct DaemonHello: Codable, Sendable, Equatable {
    /// The protocol version the daemon speaks (``DaemonWire/protocolVersion``).
    public var version: Int
    public var container: String
    /// The container's folder on this device.
    public var folder: String
    public var server: String
    public var user: String
    public var device: String
    public var deviceName: String
    /// The same for every device signed in to the same account on the same server, different
    /// for any other account (like `ubiquityIdentityToken`): 64 hex digits.
    public var identity: String

    public init(version: Int, container: String, folder: String, server: String, user: String, device: String, deviceName: String, identity: String) {
        self.version = version; self.container = container; self.folder = folder; self.server = server
        self.user = user; self.device = device; self.deviceName = deviceName; self.identity = identity
    }

    /// The identity token of `user` on `server`.
    public static func identity(server: String, user: String) -> String {
        ContentHash.of(Array("ubiq-identity\n\(server)\n\(user)".utf8)).hex
    }
}
