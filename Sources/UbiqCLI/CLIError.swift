import UbiqCore

/// A command-line failure: printed as one line on stderr, exit status 1.
public struct CLIError: Error, CustomStringConvertible {
    public let code: ErrorCode
    public let message: String
    public init(_ code: ErrorCode, _ message: String) { self.code = code; self.message = message }
    public var description: String { message }
}
