import Foundation
import UbiqCore
import UbiqDaemonProtocol

extension SyncEngine {
    /// A one-shot metadata query over local state (`ubiq ls`).
    public func query(_ spec: QuerySpec) throws -> [MetadataItem] {
        let def = try MetadataQueryDefinition(scope: spec.scope, predicate: spec.predicate, sort: spec.sort)
        return def.results(listing(), now: now())
    }

    /// A live query streamed through `emit` (`ubiq ls --watch`): `gathered` first, then one
    /// `update` per batch, until `emit` reports that the listener has gone.
    public nonisolated func watch(_ spec: QuerySpec, emit: @escaping @Sendable (DeviceResponse) async -> Bool) async throws {
        let def = try MetadataQueryDefinition(scope: spec.scope, predicate: spec.predicate, sort: spec.sort)
        let query = LiveQuery(engine: self, definition: def, interval: .milliseconds(max(1, min(spec.intervalMillis, 60_000))))
        let (stream, cont) = AsyncStream<LiveQuery.Notification>.makeStream()
        await query.start { cont.yield($0) }
        for await n in stream {
            var r = DeviceResponse(ok: true)
            switch n {
            case .didFinishGathering(let items): r.event = QueryEventLine(event: "gathered", added: items, changed: [], removed: [])
            case .didUpdate(let d): r.event = QueryEventLine(event: "update", added: d.added, changed: d.changed, removed: d.removed)
            }
            if !(await emit(r)) { break }
        }
        await query.stop()
        cont.finish()
    }
}
