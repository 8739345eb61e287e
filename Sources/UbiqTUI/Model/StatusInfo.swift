import Foundation
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol

/// What the status bar shows.
public struct StatusInfo: Equatable, Sendable {
    public var account = ""
    public var server = ""
    public var device = ""
    /// The synced folder on this device (for `e` and `o`).
    public var folder = ""
    public var state = "offline"
    /// Syncing is paused (`P`; the header says `paused`).
    public var paused = false
    public var uploads = EngineStatus.Transfers()
    public var downloads = EngineStatus.Transfers()
    public var conflicts = 0
    /// Bytes per second over the last few seconds.
    public var throughput: Double = 0
    /// Changes made here the server does not have yet (the engine's count: `ubiq status` says
    /// the same), and, offline, seconds until the next try.
    public var waiting = 0
    public var retryIn: Double?
    /// New devices waiting to join an encrypted account (the status line asks to `:approve`).
    public var joining: [String] = []
    /// Why some folder is not watched (the engine reads the whole folder every 30 s instead).
    public var watch: String?
    public init() {}
}
