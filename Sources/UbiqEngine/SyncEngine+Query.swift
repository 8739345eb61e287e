import Foundation
import UbiqCore

extension SyncEngine {
    /// A one-shot metadata query over local state.
    public func query(_ spec: QuerySpec) throws -> [MetadataItem] {
        let docs = spec.scope == "documents"
        return listing().filter { !docs || $0.path.isSelfOrDescendant(of: try! RelativePath(validating: "Documents")) }.sorted { $0.path < $1.path }
    }

    /// A live metadata query streamed through `emit` until it returns false.
    public func watch(_ spec: QuerySpec, emit: @escaping @Sendable (DeviceResponse) async -> Bool) async throws {
        throw EngineError(.invalidRequest, "watch is not available yet")
    }
}
