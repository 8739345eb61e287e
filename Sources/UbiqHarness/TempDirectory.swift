import Foundation

/// A fresh directory under the system temp folder, removed by `remove()`.
public struct TempDirectory: Sendable {
    public let url: URL
    public init(_ label: String = "ubiq-test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    /// Takes charge of a directory made elsewhere (removed by `remove()` like the others).
    public init(existing url: URL) { self.url = url }
    public var path: String { url.path }
    public func remove() { try? FileManager.default.removeItem(at: url) }
}
