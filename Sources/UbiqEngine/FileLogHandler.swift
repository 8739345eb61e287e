import Foundation
import Logging
import UbiqCore
import UbiqTransport

/// A swift-log handler appending lines to a file (the front end never logs to the screen).
/// The file is rotated: past `limit` bytes it becomes `NAME.1` (the older ones `NAME.2`,
/// `NAME.3`; the oldest is dropped), so a long-running daemon's log stays under 4 × `limit`.
public struct FileLogHandler: LogHandler {
    final class Sink: @unchecked Sendable {
        let url: URL
        let limit: Int
        static let kept = 3
        var handle: FileHandle?
        var size = 0
        let lock = NSLock()
        /// One sink per file in the process (every logger of a program writes through it, so
        /// sizes and rotations agree).
        nonisolated(unsafe) static var open: [URL: Sink] = [:]
        static let openLock = NSLock()
        static func shared(_ url: URL, limit: Int) -> Sink {
            openLock.withLock {
                if let s = open[url] { return s }
                let s = Sink(url, limit: limit)
                open[url] = s
                return s
            }
        }
        init(_ url: URL, limit: Int) {
            self.url = url
            self.limit = limit
            open()
        }
        private func open() {
            if !FileManager.default.fileExists(atPath: url.path) {
                try? PrivateDirectory.make(url.deletingLastPathComponent())
                _ = FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600])
            }
            handle = try? FileHandle(forWritingTo: url)
            size = Int((try? handle?.seekToEnd()) ?? 0)
        }
        /// `NAME.n`.
        func rotated(_ n: Int) -> URL { url.deletingLastPathComponent().appendingPathComponent("\(url.lastPathComponent).\(n)") }
        private func rotate() {
            try? handle?.close()
            handle = nil
            let fm = FileManager.default
            try? fm.removeItem(at: rotated(Self.kept))
            for n in stride(from: Self.kept - 1, through: 1, by: -1) { try? fm.moveItem(at: rotated(n), to: rotated(n + 1)) }
            try? fm.moveItem(at: url, to: rotated(1))
            open()
        }
        func write(_ s: String) {
            let data = Data(s.utf8)
            lock.withLock {
                if size > 0, size + data.count > limit { rotate() }
                try? handle?.write(contentsOf: data)
                size += data.count
            }
        }
    }

    let label: String
    let sink: Sink
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info

    /// Appends to `url` (created if missing), rotating past `limit` bytes (default 10 MiB).
    public init(label: String, url: URL, limit: Int = 10 << 20) {
        self.label = label
        sink = Sink.shared(url.standardizedFileURL, limit: max(1024, limit))
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        sink.write("\(KVDateFormat.format(Date())) \(event.level) \(label): \(event.message)\n")
    }
}
