import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging

/// The request context of the API routes: allows commit-sized bodies.
public struct UbiqRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public init(source: ApplicationRequestContextSource) { coreContext = .init(source: source) }
    public var maxUploadSize: Int { 64 << 20 }
}
