import UbiqCore

/// The engine's error: a stable code and a message a person can read.
public struct EngineError: Error, Sendable, CustomStringConvertible {
    public let code: ErrorCode
    public let message: String
    public init(_ code: ErrorCode, _ message: String) { self.code = code; self.message = message }
    public var description: String { message }
}
