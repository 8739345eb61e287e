import ArgumentParser
import Foundation
import UbiqStorage

/// The round trip of one statement through the server's database layer: what every commit pays
/// a few dozen times on PostgreSQL (on SQLite a statement is a call into the same process).
struct StatementsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "statements", abstract: "The round trip of one PostgreSQL statement through the server's database layer.")

    @Option(help: "Statements in one transaction.") var statements = 5000
    @Option(help: "A postgres:// URL whose role may create databases (the bench makes one and drops it).") var database: String

    func run() async throws {
        let base = try PostgreSQLLocation(parsing: database, environment: ProcessInfo.processInfo.environment)
        var made = base
        made.database = "ubiq_bench_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        try await PostgreSQLDatabase.administer(base, ["CREATE DATABASE \(made.database)"])
        let db = try await PostgreSQLDatabase.open(made)
        let clock = ContinuousClock()
        let n = statements
        let inOne = try await clock.measure {
            _ = try await db.write { c in
                var sum: Int64 = 0
                for i in 0..<n { sum += Int64(try c.rows("SELECT ?::bigint", [Int64(i)]).count) }
                return sum
            }
        }
        let each = min(n, 1000)
        let alone = try await clock.measure {
            for i in 0..<each { _ = try await db.readEach { c in try c.rows("SELECT ?::bigint", [Int64(i)]).count } }
        }
        let writes = try await clock.measure {
            for i in 0..<each { _ = try await db.write { c in try c.rows("SELECT ?::bigint", [Int64(i)]).count } }
        }
        func us(_ d: Duration, _ k: Int) -> String { String(format: "%.1f µs", Double(d.components.attoseconds) / 1e12 / Double(k) + Double(d.components.seconds) * 1e6 / Double(k)) }
        print("PostgreSQL: a statement in a transaction of \(n): \(us(inOne, n)); a statement on its own (readEach): \(us(alone, each)); a write transaction of one statement: \(us(writes, each))")
        await db.close()
        try? await PostgreSQLDatabase.administer(base, ["DROP DATABASE IF EXISTS \(made.database) WITH (FORCE)"])
    }
}
