import Foundation
import Logging

/// With `UBIQ_BENCH_DEBUG` set, the devices log to stderr with milliseconds since the process
/// started, so one edit's path through A, the server and B can be read as a timeline.
struct TimelineLogHandler: LogHandler {
    static let origin = ContinuousClock.now
    let label: String
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let ms = (ContinuousClock.now - Self.origin) / .milliseconds(1)
        FileHandle.standardError.write(Data(String(format: "%10.1f %@ %@\n", ms, label, "\(event.message)").utf8))
    }
}
