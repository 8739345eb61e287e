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

/// Runs blocking work (socket waits, sleeps in a child's pace) on a thread of its own, so it
/// never holds one of the few threads of Swift's cooperative pool: an in-process server needs
/// them to answer, and a test blocking one while it waits for that answer starves itself.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { c in Thread { c.resume(with: Result { try body() }) }.start() }
}
