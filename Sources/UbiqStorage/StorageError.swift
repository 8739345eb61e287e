import UbiqCore

/// The storage layer's error: a stable code (shared with the wire) and a message.
public struct StorageError: Error, Sendable, CustomStringConvertible {
    public let code: ErrorCode
    public let message: String
    /// Extra data for some codes (e.g. the missing chunk hashes of `incomplete_content`).
    public let missing: [ContentHash]
    /// For `path_exists` on a new file of an end-to-end encrypted account: the item at the path
    /// (the device seals its record again for that item and commits there).
    public let item: ItemID?

    public init(_ code: ErrorCode, _ message: String, missing: [ContentHash] = [], item: ItemID? = nil) {
        self.code = code
        self.message = message
        self.missing = missing
        self.item = item
    }

    public var description: String { "\(message) [\(code.rawValue)]" }
}
