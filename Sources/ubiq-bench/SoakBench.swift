import ArgumentParser
import Foundation
import UbiqHarness

/// The randomized multi-device run (`FleetRun`, the CI test's engine) for long soaks: several
/// real engines of one account against a real server on loopback, seeded user operations and
/// faults, invariants checked after each round. Strict: copies fail a round too.
struct SoakBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "soak", abstract: "Randomized multi-device runs with faults; prints each round's seed and findings.")

    @Option(help: "Devices (engines) per round.") var devices = 4
    @Option(help: "Operations in all (split into rounds of --round-ops).") var ops = 20_000
    @Option(help: "Operations per round (each round checks the invariants on quiet devices).") var roundOps = 500
    @Option(help: "First seed (default: random); each round uses the next.") var seed: UInt64?
    @Flag(help: "Run without faults (no engine or server restarts).") var noFaults = false

    func run() async throws {
        var next = seed ?? UInt64.random(in: 0...UInt64.max)
        var done = 0, faults = 0, failed = 0, rounds = 0
        let start = ContinuousClock.now
        while done < ops {
            let n = min(roundOps, ops - done)
            let run = FleetRun(seed: next, options: .init(devices: devices, operations: n, faults: !noFaults, strict: true))
            let r = try await run.run()
            rounds += 1; done += r.operations; faults += r.faults
            print("round \(rounds) seed \(r.seed): \(r.operations) ops, \(r.faults) faults, \(r.skipped) skipped, quiet after \(r.quietAfter), \(r.files) files in \(r.folders) folders: \(r.failures.isEmpty ? "ok" : "FAILED")")
            if !r.failures.isEmpty {
                failed += 1
                for f in r.failures { print("  \(f)") }
                if ProcessInfo.processInfo.environment["UBIQ_SOAK_LOG"] != nil { print("  log:\n    " + r.log.joined(separator: "\n    ")) }
            }
            next &+= 1
        }
        print("soak: \(done) operations, \(faults) faults in \(rounds) rounds of \(devices) devices, \(failed) failed, in \(ContinuousClock.now - start) (replay a round with UBIQ_SEED=<seed> swift test --filter MultiDeviceRandomTests)")
        if failed > 0 { throw ExitCode(1) }
    }
}
