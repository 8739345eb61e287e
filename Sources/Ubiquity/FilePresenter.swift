import Foundation
import UbiqEngine

/// Tells a program that has a document open what happens to it, as `NSFilePresenter`: its
/// content changed (saved here by another program, or a new version from another device
/// landed), it moved or was renamed, it was deleted, it gained an unresolved conflict version.
/// The document is followed by its item ID, so it is still followed after a move.
///
/// ```swift
/// for try await event in FilePresenter(url).events() {
///     switch event {
///     case .changed: reload()
///     case .moved(let to): retitle(to)
///     case .deleted: close()
///     case .gainedConflict: offerToResolve()
///     }
/// }
/// ```
public struct FilePresenter: Sendable {
    public enum Event: Sendable, Equatable {
        /// The content changed (its modification date or size is new).
        case changed
        /// The document is now at this URL.
        case moved(to: URL)
        /// The document is gone (deleted here or on another device: see the trash).
        case deleted
        /// Another device's version conflicts with this one (see `FileVersion`).
        case gainedConflict
    }

    public let url: URL
    let ubiquity: Ubiquity

    public init(_ url: URL, ubiquity: Ubiquity = .standard) {
        self.url = url
        self.ubiquity = ubiquity
    }

    /// The document's events from now on (`ready` is called once it is followed: what happens
    /// after that is reported); ends after `deleted`, or when the consuming task stops
    /// iterating. Throws at once when the URL is not a synced item.
    public func events(ready: (@Sendable () -> Void)? = nil) -> AsyncThrowingStream<Event, Error> {
        let ubiquity = self.ubiquity, url = self.url
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let at = try ubiquity.locate(url)
                    guard let item = try await ubiquity.status(of: url) else {
                        throw UbiquityError(.refused, "\(url.path) is not a synced item (yet)")
                    }
                    let folder = at.folder
                    let predicate = QueryPredicate.compare(.itemID, .equal, .string(item.itemID.description), caseInsensitive: false)
                    let last = Locked<MetadataItem?>(nil)
                    _ = try await ubiquity.ask(.watch(query: QuerySpec(predicate: predicate.description, scope: "data")), container: at.container) { r in
                        guard let e = r.event else { return true }
                        if e.event == "gathered" {
                            last.withLock { $0 = e.added.first }
                            ready?()
                            return true
                        }
                        if !e.removed.isEmpty {
                            continuation.yield(.deleted)
                            return false
                        }
                        for now in e.added + e.changed {
                            let before = last.withLock { l -> MetadataItem? in defer { l = now }; return l }
                            guard let before else { continue }
                            if now.path != before.path { continuation.yield(.moved(to: folder.appendingPathComponent(now.path.string))) }
                            if now.modified != before.modified || now.size != before.size { continuation.yield(.changed) }
                            if now.conflict && !before.conflict { continuation.yield(.gainedConflict) }
                        }
                        return !Task.isCancelled
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
