import UbiqCore

/// A failed call to the server: the server's stable code (or `server_unreachable` /
/// `bad_response` for transport problems), its message, and the HTTP status if there was one.
public struct ClientError: Error, Sendable, CustomStringConvertible {
    public let code: ErrorCode
    public let message: String
    public let status: Int?
    /// For `incomplete_content`: the chunks the server still lacks.
    public let missing: [ContentHash]
    /// For `path_exists` on a new file of an end-to-end encrypted account: the item the server
    /// has at the path (`APIErrorBody.Detail.item`).
    public let item: ItemID?

    public init(_ code: ErrorCode, _ message: String, status: Int? = nil, missing: [ContentHash] = [], item: ItemID? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.missing = missing
        self.item = item
    }

    public var description: String { "\(message) [\(code.rawValue)]" }
}
