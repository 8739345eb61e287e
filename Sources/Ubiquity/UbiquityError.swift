import Foundation

/// What went wrong in a call to the library: a stable code and a line a person can read.
public struct UbiquityError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable codes (match on these, not on messages).
    public enum Code: String, Sendable, Equatable {
        /// No daemon runs for the home (start one: `ubiq daemon`, or `ubiq service install`).
        case noDaemon = "no_daemon"
        /// The daemon speaks a protocol this library does not.
        case protocolMismatch = "protocol_mismatch"
        /// The daemon's answer was cut off or unreadable.
        case brokenAnswer = "broken_answer"
        /// The URL is not inside a container this device syncs, or the store is not synced here.
        case notInContainer = "not_in_container"
        /// The daemon refused the request (its message says why: no such item, a bad predicate…).
        case refused = "refused"
        /// A local file operation failed.
        case fileSystem = "file_system"
    }

    public let code: Code
    public let message: String
    /// For `refused`: the daemon's stable code for why (`not_found`, `server_unreachable`, …)
    /// when it gave one — the same codes as the server's and the command line's.
    public let reason: ErrorCode?
    public init(_ code: Code, _ message: String, reason: ErrorCode? = nil) { self.code = code; self.message = message; self.reason = reason }
    public var description: String { "\(message) [\(code.rawValue)]" }

    static func from(_ failure: DaemonClient.Failure, home: String) -> UbiquityError {
        switch failure {
        case .noDaemon:
            return UbiquityError(.noDaemon, "no Ubiquity daemon is running for \(home): start one with 'ubiq daemon' (or 'ubiq service install')")
        case .brokenAnswer(let why): return UbiquityError(.brokenAnswer, why)
        case .untrusted(let why): return UbiquityError(.refused, "not asking the daemon for \(home): \(why)")
        }
    }
}
