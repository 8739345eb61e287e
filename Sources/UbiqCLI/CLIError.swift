import UbiqCore

/// A command-line failure: printed as one line on stderr, exit status 1.
public struct CLIError: Error, CustomStringConvertible {
    public let code: ErrorCode
    public let message: String
    public init(_ code: ErrorCode, _ message: String) { self.code = code; self.message = message }
    public var description: String { message }

    /// Runs `body`; any error becomes an `invalidValue` CLIError worded by `message`.
    static func map<T>(_ message: (Error) -> String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw CLIError(.invalidValue, message(error)) }
    }
}
