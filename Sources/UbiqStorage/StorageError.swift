import UbiqCore

/// The storage layer's error: a stable code (shared with the wire) and a message.
public struct StorageError: Error, Sendable, CustomStringConvertible {
    public let code: ErrorCode
    public let message: String
    /// Extra data for some codes (e.g. the missing chunk hashes of `incomplete_content`).
    public let missing: [ContentHash]

    public init(_ code: ErrorCode, _ message: String, missing: [ContentHash] = []) {
        self.code = code
        self.message = message
        self.missing = missing
    }

    public var description: String { "\(message) [\(code.rawValue)]" }
}
