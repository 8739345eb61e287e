import Foundation
import Logging

/// The last lines a test device's engine (or a test server) logged at debug level and above,
/// kept in memory: when a bounded wait of the test runs out (`eventually`), the rings of the
/// devices that test made are printed, so a failure seen once on a loaded CI box comes with
/// what the engines were doing — not only "the file did not arrive in 30 s".
public final class RingLog: @unchecked Sendable {
    public let name: String
    private let lock = NSLock()
    private var lines: [String] = []
    private var next = 0
    private let capacity: Int

    public init(name: String, capacity: Int = 400) {
        self.name = name
        self.capacity = capacity
    }

    func append(_ line: String) {
        lock.withLock {
            if lines.count < capacity { lines.append(line) } else { lines[next] = line }
            next = (next + 1) % capacity
        }
    }

    /// The kept lines, oldest first.
    public var recent: [String] {
        lock.withLock { lines.count < capacity ? lines : Array(lines[next...] + lines[..<next]) }
    }

    /// A logger writing to this ring at `kept` and above and to standard error at the level
    /// `UBIQ_TEST_LOG` names, else `fallback`.
    public func logger(label: String, fallback: Logger.Level, kept: Logger.Level = .debug) -> Logger {
        let level = ProcessInfo.processInfo.environment["UBIQ_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? fallback
        return Logger(label: label) { label in
            var err = StreamLogHandler.standardError(label: label)
            err.logLevel = level
            return MultiplexLogHandler([err, RingLogHandler(ring: self, logLevel: kept)])
        }
    }

    /// Registers this ring with the running test (if any), for `dumpForCurrentTest`.
    public func registerWithCurrentTest() -> RingLog {
        TestRings.register(self)
        return self
    }
}

/// A `LogHandler` appending one line per message to a `RingLog`.
struct RingLogHandler: LogHandler {
    let ring: RingLog
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let extra = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let stamp = Date().timeIntervalSince1970
        ring.append(String(format: "%.3f", stamp) + " \(event.level) [\(event.source)] \(event.message)\(extra)")
    }
}

/// The rings made by each running test, by the test's ID (held weakly: a device gone frees its
/// ring).
public enum TestRings {
    final class Weak: @unchecked Sendable { weak var ring: RingLog?; init(_ r: RingLog) { ring = r } }
    private static let lock = NSLock()
    nonisolated(unsafe) private static var byTest: [String: [Weak]] = [:]

    /// Names the running test (nil: none). The test helpers (`UbiqTesting`) install one that
    /// reads Swift Testing's current test when a test binary starts; a program that drives the
    /// harness without tests (`ubiq-bench soak`) keeps no rings by test.
    nonisolated(unsafe) public static var keyOfCurrentTest: @Sendable () -> String? = { nil }

    static var currentKey: String? { keyOfCurrentTest() }

    static func register(_ ring: RingLog) {
        guard let key = currentKey else { return }
        lock.withLock {
            byTest = byTest.filter { !$0.value.allSatisfy { $0.ring == nil } }
            byTest[key, default: []].append(Weak(ring))
        }
    }

    /// The recent lines of every ring the running test made, one block per ring.
    public static func dumpForCurrentTest() -> String {
        guard let key = currentKey else { return "" }
        let rings = lock.withLock { (byTest[key] ?? []).compactMap(\.ring) }
        return rings.map { r in "--- \(r.name): last \(r.recent.count) log lines ---\n" + r.recent.joined(separator: "\n") }.joined(separator: "\n")
    }
}
