import Foundation

/// Coordinated reading and writing of documents in the container, as `NSFileCoordinator`:
/// while your closure runs, the engine leaves the item alone — a coordinated **write** is never
/// uploaded half-written, however long it pauses, and no download or other device's change
/// replaces or moves the file under it; a coordinated **read** never sees the file replaced
/// (a download waits, then lands). When the closure returns (or throws, or the program dies)
/// the engine takes the item up again at once.
///
/// ```swift
/// try await FileCoordinator().coordinate(writingItemAt: url) { url in
///     try bigExport.write(to: url)      // written in pieces, pauses and all
/// }
/// ```
public struct FileCoordinator: Sendable {
    let ubiquity: Ubiquity

    public init(ubiquity: Ubiquity = .standard) { self.ubiquity = ubiquity }

    /// Runs `body` while the engine holds off the item at `url` for a write.
    public func coordinate<T: Sendable>(writingItemAt url: URL, _ body: (URL) async throws -> T) async throws -> T {
        try await coordinate([url], writing: true) { try await body(url) }
    }

    /// Runs `body` while the engine does not replace the item at `url`.
    public func coordinate<T: Sendable>(readingItemAt url: URL, _ body: (URL) async throws -> T) async throws -> T {
        try await coordinate([url], writing: false) { try await body(url) }
    }

    /// Holds every URL (all inside the container) while `body` runs.
    public func coordinate<T: Sendable>(_ urls: [URL], writing: Bool, _ body: () async throws -> T) async throws -> T {
        let located = try urls.map { try self.ubiquity.locate($0) }
        guard let container = located.first?.container, located.allSatisfy({ $0.container == container }) else {
            throw UbiquityError(.notInContainer, "coordinate one or more items of one container")
        }
        let paths = located.map(\.path)
        let (ready, signal) = AsyncStream<Result<Void, UbiquityError>>.makeStream()
        let ubiquity = self.ubiquity
        let holding = Task {
            do {
                _ = try await ubiquity.ask(.coordinate(paths: paths, writing: writing), container: container) { r in
                    if r.ready == true { signal.yield(.success(())) }
                    return !Task.isCancelled
                }
            } catch let e as UbiquityError {
                signal.yield(.failure(e))
            } catch {
                signal.yield(.failure(UbiquityError(.brokenAnswer, "\(error)")))
            }
            signal.finish()
        }
        // Let go when done, whatever happens (closing the connection is letting go).
        defer { holding.cancel() }
        var iterator = ready.makeAsyncIterator()
        switch await iterator.next() {
        case .success?: break
        case .failure(let e)?: throw e
        case nil: throw UbiquityError(.brokenAnswer, "the daemon did not take the coordination")
        }
        return try await body()
    }
}
