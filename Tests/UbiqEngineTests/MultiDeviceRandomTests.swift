import Foundation
import Testing
import UbiqTesting

/// The real engines as three devices of one account against a real server, under seeded random
/// user operations and faults (see `FleetRun`). A failing run prints its seed and operation log;
/// `UBIQ_SEED=<seed>` replays it, `UBIQ_FLEET_OPS` sets the number of steps.
@Suite("Randomized multi-device runs", .serialized)
struct MultiDeviceRandomTests {
    static func seeds() -> [UInt64] {
        if let s = ProcessInfo.processInfo.environment["UBIQ_SEED"].flatMap(UInt64.init) { return [s] }
        var g = SystemRandomNumberGenerator()
        let runs = ProcessInfo.processInfo.environment["UBIQ_FLEET_RUNS"].flatMap(Int.init) ?? 2
        return (0..<runs).map { _ in g.next() }
    }

    static var operations: Int { ProcessInfo.processInfo.environment["UBIQ_FLEET_OPS"].flatMap(Int.init) ?? 150 }

    @Test(arguments: seeds()) func threeDevicesWithFaultsConverge(seed: UInt64) async throws {
        try await Self.run(seed: seed, .init(devices: 3, operations: Self.operations, faults: true))
    }

    /// The same on an end-to-end encrypted account: the server holds only sealed names and
    /// chunks, and the checks read it through the account's key.
    @Test(arguments: Array(seeds().prefix(1)))
    func threeDevicesOnAnEncryptedAccountConverge(seed: UInt64) async throws {
        var options = FleetRun.Options(devices: 3, operations: Self.operations, faults: true)
        options.encrypted = true
        try await Self.run(seed: seed, options)
    }

    /// The same on the scale-out stores: PostgreSQL and an S3 bucket shared by two servers,
    /// devices on both (every change crosses servers; restarts take one server down at a time).
    @Test(.enabled(if: S3TestStore.runs && PostgresTestDatabase.runs), arguments: Array(seeds().prefix(1)))
    func threeDevicesOnTwoServersOnPostgreSQLAndS3Converge(seed: UInt64) async throws {
        guard let database = try await DatabaseKind.postgres.fresh() else { return }
        try await Self.run(seed: seed, .init(devices: 3, operations: Self.operations, faults: true, database: database, blobs: StoreKind.s3.blobs, servers: 2))
    }

    static func run(seed: UInt64, _ options: FleetRun.Options) async throws {
        var options = options
        options.strict = ProcessInfo.processInfo.environment["UBIQ_FLEET_STRICT"] == "1"
        let report = try await FleetRun(seed: seed, options: options).run()
        print("[fleet] seed \(seed): \(report.operations) steps, \(report.faults) faults (\(report.diskFailures) disk calls failed), \(report.skipped) skipped, \(options.encrypted ? "\(report.keyRolls) key rolls, \(report.rekeys) rekeys, " : "")\(report.keptOlder) older versions kept, quiet after \(report.quietAfter), \(report.files) files in \(report.folders) folders")
        for w in report.warnings { print("[fleet] seed \(seed) warning (replay with UBIQ_SEED=\(seed)): \(w)") }
        if !report.failures.isEmpty {
            print("[fleet] seed \(seed) FAILED (replay with UBIQ_SEED=\(seed)):\n  " + report.failures.joined(separator: "\n  "))
        }
        if !report.failures.isEmpty || !report.warnings.isEmpty {
            print("[fleet] seed \(seed) operation log:\n  " + report.log.joined(separator: "\n  "))
        }
        #expect(report.failures.isEmpty, "seed \(seed): \(report.failures.prefix(5))")
    }
}
