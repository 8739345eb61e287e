import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging

/// The request context of the API routes: allows commit-sized bodies.
public struct UbiqRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's address (its IP without the port), for the login throttle.
    public let peer: String
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peer = source.channel.remoteAddress?.ipAddress ?? source.channel.remoteAddress?.description ?? "unknown"
    }
    public var maxUploadSize: Int { 64 << 20 }
}
