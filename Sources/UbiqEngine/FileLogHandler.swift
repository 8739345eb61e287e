import Foundation
import Logging
import UbiqCore
import UbiqTransport

/// A swift-log handler appending lines to a file (the front end never logs to the screen).
public struct FileLogHandler: LogHandler {
    final class Sink: @unchecked Sendable {
        let handle: FileHandle?
        let lock = NSLock()
        init(_ url: URL) {
            if !FileManager.default.fileExists(atPath: url.path) {
                try? PrivateDirectory.make(url.deletingLastPathComponent())
                _ = FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600])
            }
            handle = try? FileHandle(forWritingTo: url)
            _ = try? handle?.seekToEnd()
        }
        func write(_ s: String) { lock.withLock { try? handle?.write(contentsOf: Data(s.utf8)) } }
    }

    let label: String
    let sink: Sink
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info

    /// Appends to `url` (created if missing).
    public init(label: String, url: URL) {
        self.label = label
        sink = Sink(url)
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        sink.write("\(KVDateFormat.format(Date())) \(event.level) \(label): \(event.message)\n")
    }
}
