import Foundation
import Testing
@testable import UbiqStorage
import UbiqTesting

/// `--database postgres://…` as people write it, and as a fuzzer mangles it.
@Suite("PostgreSQL location")
struct PostgreSQLLocationTests {
    @Test func theURLsPartsAndWhereThePasswordComesFrom() throws {
        let a = try PostgreSQLLocation(parsing: "postgres://ubiq:s%40cret@db.example.com:6543/meta?sslmode=require&connections=20", environment: [:])
        #expect(a.host == "db.example.com" && a.port == 6543 && a.user == "ubiq" && a.password == "s@cret" && a.database == "meta")
        #expect(a.tls && a.connections == 20 && a.statementTimeout == 120)
        #expect(try PostgreSQLLocation(parsing: "postgres://u@h/d?statement_timeout=5", environment: [:]).statementTimeout == 5)
        #expect(!a.redacted.contains("s@cret") && a.redacted.contains("db.example.com:6543/meta"))
        let b = try PostgreSQLLocation(parsing: "postgresql://ubiq@[::1]/meta", environment: ["UBIQ_DATABASE_PASSWORD": "from-env"])
        #expect(b.host == "::1" && b.port == 5432 && b.password == "from-env" && !b.tls && b.connections == 10)
        let dir = try TempDirectory("pg-password")
        defer { dir.remove() }
        let file = dir.url.appendingPathComponent("pw").path
        try "from-file\n".write(toFile: file, atomically: true, encoding: .utf8)
        let c = try PostgreSQLLocation(parsing: "postgres://ubiq@h/meta", environment: ["UBIQ_DATABASE_PASSWORD_FILE": file])
        #expect(c.password == "from-file")
        // The URL's own password wins over the environment's.
        #expect(try PostgreSQLLocation(parsing: "postgres://u:mine@h/d", environment: ["UBIQ_DATABASE_PASSWORD": "env"]).password == "mine")
        for bad in ["mysql://u@h/d", "postgres://h/d", "postgres://u@h", "postgres://u@h/", "postgres://u@h/d/e", "postgres://u@h:0/d",
                    "postgres://u@h/d?sslmode=prefer", "postgres://u@h/d?connections=0", "postgres://u@h/d?connections=1000", "postgres://u@h/d?x=1",
                    "postgres://u@h/d?statement_timeout=0", "postgres://u@h/d?statement_timeout=9999", "postgres://u@h/d?statement_timeout=1e3",
                    "not a url", ""] {
            #expect(throws: StorageError.self, "\(bad)") { try PostgreSQLLocation(parsing: bad, environment: [:]) }
        }
        #expect(throws: StorageError.self) { try PostgreSQLLocation(parsing: "postgres://u@h/d", environment: ["UBIQ_DATABASE_PASSWORD_FILE": "/nonexistent/pw"]) }
    }

    /// #45 row 7: `sslmode` defaulted to `disable` for remote hosts — the password and every
    /// path crossed the network in clear unless the operator knew to ask. TLS is now the default
    /// for any host but loopback; `sslmode=disable` still opts out.
    @Test func tlsIsTheDefaultForAnyHostButLoopback() throws {
        for host in ["db.example.com", "10.0.0.5", "[fd00::1]", "127.0.0.1.example.com", "localhost.example.com"] {
            #expect(try PostgreSQLLocation(parsing: "postgres://u@\(host)/d", environment: [:]).tls, "\(host)")
        }
        for host in ["localhost", "127.0.0.1", "127.1.2.3", "[::1]", "LOCALHOST"] {
            #expect(try !PostgreSQLLocation(parsing: "postgres://u@\(host)/d", environment: [:]).tls, "\(host)")
        }
        #expect(try !PostgreSQLLocation(parsing: "postgres://u@db.example.com/d?sslmode=disable", environment: [:]).tls)
        #expect(try PostgreSQLLocation(parsing: "postgres://u@localhost/d?sslmode=require", environment: [:]).tls)
        #expect(try PostgreSQLLocation(parsing: "postgres://u@db.example.com/d", environment: [:]).redacted.hasSuffix("?sslmode=require"))
    }

    /// Mangled URLs: an answer or a clear error, never a crash.
    @Test func mangledURLsAreRefusedClearly() {
        var rng = SeededRandom.forTest("pg.location")
        let base = Array("postgres://user:pass@host.example:5432/db?sslmode=require&connections=5".utf8)
        let alphabet = Array("/:@?&=%[]#. \u{0}x9".utf8)
        for _ in 0..<3_000 {
            var bytes = base
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                let i = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: bytes[i] = alphabet.randomElement(using: &rng)!
                case 1: bytes.remove(at: i)
                default: bytes.insert(alphabet.randomElement(using: &rng)!, at: i)
                }
                if bytes.isEmpty { bytes = base }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            do {
                let l = try PostgreSQLLocation(parsing: text, environment: [:])
                #expect(!l.host.isEmpty && !l.user.isEmpty && !l.database.isEmpty && (1...65535).contains(l.port) && (1...100).contains(l.connections))
            } catch let e as StorageError {
                #expect(e.code == .invalidRequest)
            } catch {
                Issue.record("unexpected \(error) for \(text)")
            }
        }
    }

    @Test func placeholdersAreNumberedOutsideQuotes() {
        #expect(PGConnection.numbered("SELECT ? , '?', ? FROM t WHERE a = ? AND b = 'x?y'") == "SELECT $1 , '?', $2 FROM t WHERE a = $3 AND b = 'x?y'")
    }

    /// A look-up that stands alone (`readEach`: a token's check before every request, a chunk's
    /// owner, the account's usage) pays no `BEGIN` and `COMMIT` round trips on PostgreSQL —
    /// called the way the stores call it, through `any SQLDatabase`. (It was an extension's
    /// method, chosen statically: every such read ran in a transaction.) A `read` is one
    /// transaction throughout.
    @Test func aStandAloneReadRunsOutsideATransactionThroughAnyDatabase() async throws {
        guard PostgresTestDatabase.runs, let location = try await PostgresTestDatabase.fresh() else { return }
        defer { Task { await PostgresTestDatabase.drop(location) } }
        let database: any SQLDatabase = try await PostgreSQLDatabase.open(location)
        defer { Task { await database.close() } }
        // Two statements: in one transaction they see one `now()` (its start); each alone, its own.
        let body: @Sendable (any SQLConnection) throws -> Bool = { db in
            let first: String? = try db.value("SELECT now()::text FROM pg_sleep(0.002)")
            let second: String? = try db.value("SELECT now()::text")
            return first != nil && first == second
        }
        #expect(try await database.readEach(body) == false, "readEach ran in a transaction")
        #expect(try await database.read(body) == true, "read ran outside a transaction")
    }
}
