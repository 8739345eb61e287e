import Foundation

/// Where a PostgreSQL metadata database is: `--database postgres://USER[:PASSWORD]@HOST[:PORT]/DB`
/// with optional `?sslmode=require` (TLS, the server's certificate checked against the system's
/// roots or `sslrootcert=PATH`; the default for any host but loopback, `sslmode=disable` to opt out) and `connections=N` (the server's pool, 1…100, default 10). The
/// password may also come from `UBIQ_DATABASE_PASSWORD` or from the file `UBIQ_DATABASE_PASSWORD_FILE`
/// names, so it need not sit in a command line others can read.
public struct PostgreSQLLocation: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tls: Bool
    public var rootCertificate: String?
    public var connections: Int
    /// How long one statement may wait for its answer before its connection is given up
    /// (`statement_timeout=SECONDS`, 1…3600, default 120): a database that stops answering
    /// without closing the connection (a partition, a frozen host) is an error, not a hang.
    /// Schema upgrades at start-up are not bounded.
    public var statementTimeout = 120

    /// The URL without its password (for messages and logs).
    public var redacted: String {
        "postgres://\(user)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)" + (tls ? "?sslmode=require" : "")
    }

    /// Parses `text`; a clear `invalid_request` error says what is wrong.
    public init(parsing text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        func bad(_ why: String) -> StorageError { StorageError(.invalidRequest, "--database: \(why) (postgres://USER:PASSWORD@HOST:PORT/DATABASE)") }
        guard text.utf8.count <= 4096 else { throw bad("too long") }
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased() else { throw bad("not a URL") }
        guard scheme == "postgres" || scheme == "postgresql" else { throw bad("the scheme must be postgres://, not \(scheme)://") }
        guard let host = url.host, !host.isEmpty else { throw bad("no host") }
        guard let user = url.user, !user.isEmpty else { throw bad("no user") }
        let db = String(url.path.drop(while: { $0 == "/" }))
        guard !db.isEmpty, !db.contains("/") else { throw bad("no database name after the host") }
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        self.port = url.port ?? 5432
        guard (1...65535).contains(port) else { throw bad("port \(port) is out of range") }
        self.user = user
        self.database = db
        self.tls = false
        self.connections = 10
        for item in url.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                switch value {
                case "disable": tls = false
                case "require", "verify-ca", "verify-full": tls = true
                default: throw bad("sslmode must be disable or require, not '\(value)'")
                }
            case "sslrootcert": rootCertificate = value
            case "connections":
                guard let n = Int(value), (1...100).contains(n) else { throw bad("connections must be 1…100") }
                connections = n
            case "statement_timeout":
                guard let n = Int(value), (1...3600).contains(n) else { throw bad("statement_timeout must be 1…3600 seconds") }
                statementTimeout = n
            default: throw bad("unknown parameter '\(item.name)'")
            }
        }
        // Passwords and every path in clear over a network only when asked for (#45 row 7).
        if !(url.queryItems ?? []).contains(where: { $0.name == "sslmode" }) { tls = !Self.isLoopback(self.host) }
        if let p = url.password {
            password = p
        } else if let p = environment["UBIQ_DATABASE_PASSWORD"] {
            password = p
        } else if let file = environment["UBIQ_DATABASE_PASSWORD_FILE"] {
            guard let data = FileManager.default.contents(atPath: file), data.count <= 4096, let text = String(data: data, encoding: .utf8) else {
                throw StorageError(.invalidRequest, "UBIQ_DATABASE_PASSWORD_FILE: cannot read the password from \(file)")
            }
            password = text.trimmingCharacters(in: .newlines)
        }
    }

    /// `localhost` or an address in 127.0.0.0/8 or `::1`: traffic that never leaves the machine.
    public static func isLoopback(_ host: String) -> Bool {
        let h = host.lowercased()
        if h == "localhost" || h == "::1" || h == "0:0:0:0:0:0:0:1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
