import ArgumentParser
import Foundation
import UbiqEngine

/// `ubiq-bench`: speed and memory measurements (run with `swift run -c release ubiq-bench …`).
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ubiq-bench",
        abstract: "Ubiquity benchmarks (build with -c release).",
        subcommands: [ChunkerBench.self, DedupTimingBench.self, HostileDeltaBench.self, CommitBench.self, SyncBench.self, BulkBench.self, EngineMemoryBench.self, LiveBench.self, TUIBench.self, WireBench.self, PlannerBench.self, ScaleBench.self, SoakBench.self, GCBench.self, FleetPushBench.self, ChannelsBench.self, LibraryBench.self, StatementsBench.self],
        defaultSubcommand: nil
    )

    /// Runs the chosen benchmark with the allocator tuned as `ubiq` tunes it.
    static func main() async {
        ProcessMemory.tune()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand { try await asyncCommand.run() } else { try command.run() }
        } catch {
            exit(withError: error)
        }
    }
}

/// Median of a list of measurements.
func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.isEmpty ? 0 : (s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2)
}

/// Resident set size of this process in MiB (from /proc/self/status).
func rssMiB() -> Double {
    guard let s = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = s.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kb = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kb / 1024
}

/// CPU seconds this process has used so far (user, system), every thread counted.
func cpuSeconds() -> (user: Double, system: Double) {
    var u = rusage()
    getrusage(RUSAGE_SELF.rawValue, &u)
    func s(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return (s(u.ru_utime), s(u.ru_stime))
}

func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
