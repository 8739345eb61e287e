import Foundation
import UbiqCore

/// What `ubiq status --json` prints (product §6).
public struct EngineStatus: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable { case online, offline, signedOut }
    public struct Transfers: Codable, Sendable, Equatable {
        public var queued: Int
        public var running: Int
        public var bytesDone: Int64
        public var bytesTotal: Int64
        /// Files this run of transfers finished, and its files in all (finished, running and
        /// queued; never falls while the run lasts). Absent from older daemons.
        public var done: Int?
        public var filesTotal: Int?
        public init(queued: Int = 0, running: Int = 0, bytesDone: Int64 = 0, bytesTotal: Int64 = 0) {
            self.queued = queued; self.running = running; self.bytesDone = bytesDone; self.bytesTotal = bytesTotal
        }
    }

    public var state: State
    /// True when nothing is left to upload, download or apply.
    public var idle: Bool
    public var account: String?
    public var server: String?
    public var device: String?
    public var container: String?
    /// The synced folder on this device (absolute), when signed in.
    public var folder: String?
    public var uploads: Transfers
    public var downloads: Transfers
    public var conflicts: Int
    /// The last error, if the last pass hit one.
    public var lastError: String?
    /// Items whose last step failed (each retried with a growing delay).
    public var errors: [ItemError]
    /// True while the user has paused syncing (`ubiq pause`, `P`); absent otherwise.
    public var paused: Bool?
    /// Changes made on this device the server does not have yet — items only this device has,
    /// files changed here — counted in every state (online, paused, offline). What `ubiq status`
    /// and the front end both say waits (#44 row 4: they disagreed). Absent from older daemons.
    public var waiting: Int?
    /// Offline: seconds until the engine tries the server again.
    public var retryIn: Double?
    /// On an encrypted account: the names of new devices waiting to be let in (their
    /// `ubiq login` shows a code to approve); absent when none waits.
    public var joining: [String]?
    /// When some folder is not watched (inotify out of watches, or unavailable): how many, what
    /// the engine does instead and how to fix it; absent when every folder is watched.
    public var watch: String?

    /// An item that is stuck: its path, the stable error code, what went wrong, since when.
    public struct ItemError: Codable, Sendable, Equatable {
        public var path: String
        public var code: String
        public var message: String
        public var since: Date
        public var attempts: Int
        public init(path: String, code: String, message: String, since: Date, attempts: Int) {
            self.path = path; self.code = code; self.message = message; self.since = since; self.attempts = attempts
        }
    }

    public init(state: State, idle: Bool, account: String?, server: String?, device: String?, container: String?,
                uploads: Transfers = .init(), downloads: Transfers = .init(), conflicts: Int = 0, lastError: String? = nil, errors: [ItemError] = []) {
        self.state = state; self.idle = idle; self.account = account; self.server = server; self.device = device
        self.container = container; self.uploads = uploads; self.downloads = downloads; self.conflicts = conflicts; self.lastError = lastError
        self.errors = errors
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        state = try c.decode(State.self, forKey: .state)
        idle = try c.decode(Bool.self, forKey: .idle)
        account = try c.decodeIfPresent(String.self, forKey: .account)
        server = try c.decodeIfPresent(String.self, forKey: .server)
        device = try c.decodeIfPresent(String.self, forKey: .device)
        container = try c.decodeIfPresent(String.self, forKey: .container)
        folder = try c.decodeIfPresent(String.self, forKey: .folder)
        uploads = try c.decode(Transfers.self, forKey: .uploads)
        downloads = try c.decode(Transfers.self, forKey: .downloads)
        conflicts = try c.decode(Int.self, forKey: .conflicts)
        lastError = try c.decodeIfPresent(String.self, forKey: .lastError)
        errors = try c.decodeIfPresent([ItemError].self, forKey: .errors) ?? []  // older daemons send none
        paused = try c.decodeIfPresent(Bool.self, forKey: .paused)
        waiting = try c.decodeIfPresent(Int.self, forKey: .waiting)
        retryIn = try c.decodeIfPresent(Double.self, forKey: .retryIn)
        joining = try c.decodeIfPresent([String].self, forKey: .joining)
        watch = try c.decodeIfPresent(String.self, forKey: .watch)
    }

    public static let signedOut = EngineStatus(state: .signedOut, idle: true, account: nil, server: nil, device: nil, container: nil)
}
