import Foundation
import UbiqDaemonProtocol

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
    /// iterating. Throws at once when the URL is not a synced item. It outlives the daemon:
    /// when it stops, the presenter waits for one (looking every `retry`) and reports what
    /// happened to the document meanwhile.
    public func events(ready: (@Sendable () -> Void)? = nil, retry: Duration = .seconds(1)) -> AsyncThrowingStream<Event, Error> {
        let ubiquity = self.ubiquity, url = self.url
        return AsyncThrowingStream { continuation in
            let task = Task {
                let at: Ubiquity.Located, item: MetadataItem
                do {
                    at = try ubiquity.locate(url)
                    guard let found = try await ubiquity.status(of: url) else {
                        throw UbiquityError(.refused, "\(url.path) is not a synced item (yet)")
                    }
                    item = found
                } catch {
                    continuation.finish(throwing: error)
                    return
                }
                let folder = at.folder
                let predicate = QueryPredicate.compare(.itemID, .equal, .string(item.itemID.description), caseInsensitive: false)
                let last = Locked<MetadataItem?>(nil)
                let followed = Locked(false), ended = Locked(false)
                /// Reports how `now` differs from what was last seen; false once the document is gone.
                let report: @Sendable (MetadataItem?) -> Bool = { now in
                    guard let now else {
                        continuation.yield(.deleted)
                        ended.withLock { $0 = true }
                        return false
                    }
                    let before = last.withLock { l -> MetadataItem? in defer { l = now }; return l }
                    for event in Self.events(from: before, to: now, in: folder) { continuation.yield(event) }
                    return true
                }
                do {
                    try await ubiquity.follow(.watch(query: QuerySpec(predicate: predicate.description, scope: "data")), container: at.container, retry: retry,
                                              began: { followed.withLock { $0 } }, ended: { ended.withLock { $0 } }) { r in
                        guard let e = r.event else { return true }
                        if e.event == "gathered" {
                            if followed.withLock({ l in defer { l = true }; return l }) {
                                // A daemon that came back: what happened meanwhile.
                                return report(e.added.first) && !Task.isCancelled
                            }
                            last.withLock { $0 = e.added.first }
                            ready?()
                            return true
                        }
                        if !e.removed.isEmpty { return report(nil) }
                        for now in e.added + e.changed { _ = report(now) }
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

    /// What a program is told when its document was `before` and is `now` (pure).
    static func events(from before: MetadataItem?, to now: MetadataItem, in folder: URL) -> [Event] {
        guard let before else { return [] }
        var out: [Event] = []
        if now.path != before.path { out.append(.moved(to: folder.appendingPathComponent(now.path.string))) }
        if now.modified != before.modified || now.size != before.size { out.append(.changed) }
        if now.conflict && !before.conflict { out.append(.gainedConflict) }
        return out
    }
}
