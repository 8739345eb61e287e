import Foundation
import UbiqCore

/// Where the server listens and keeps its data.
public struct ServerConfiguration: Sendable {
    /// Default port of `ubiq server`.
    public static let defaultPort = 8737

    public var dataDirectory: URL
    public var host: String
    public var port: Int
    /// Quota given to accounts created without `--quota`: 5 GiB.
    public static let defaultQuota: Int64 = 5 << 30

    public init(dataDirectory: URL, host: String = "127.0.0.1", port: Int = ServerConfiguration.defaultPort) {
        self.dataDirectory = dataDirectory
        self.host = host
        self.port = port
    }

    /// `$XDG_DATA_HOME/ubiquity/server`, else `~/.local/share/ubiquity/server`.
    public static func defaultDataDirectory(environment: [String: String]) -> URL {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("ubiquity/server")
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".local/share/ubiquity/server")
    }

    /// Parses `HOST:PORT`, `[v6]:PORT`, `:PORT` or `HOST` (default port).
    public static func parseListen(_ s: String) throws -> (host: String, port: Int) {
        func port(_ p: Substring) throws -> Int {
            guard let n = Int(p), (0...65535).contains(n) else { throw CoreError(.invalidValue, "bad port '\(p)' in --listen \(s)") }
            return n
        }
        if s.hasPrefix("[") {
            guard let close = s.firstIndex(of: "]") else { throw CoreError(.invalidValue, "bad --listen address '\(s)'") }
            let host = String(s[s.index(after: s.startIndex)..<close])
            let rest = s[s.index(after: close)...]
            if rest.isEmpty { return (host, defaultPort) }
            guard rest.hasPrefix(":") else { throw CoreError(.invalidValue, "bad --listen address '\(s)'") }
            return (host, try port(rest.dropFirst()))
        }
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1:
            guard !s.isEmpty else { throw CoreError(.invalidValue, "empty --listen address") }
            return (s, defaultPort)
        case 2: return (parts[0].isEmpty ? "127.0.0.1" : String(parts[0]), try port(parts[1]))
        default: throw CoreError(.invalidValue, "bad --listen address '\(s)' (use HOST:PORT or [IPv6]:PORT)")
        }
    }
}
