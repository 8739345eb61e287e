import Foundation
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol

extension DeviceResponse {
    /// A refusal carrying one line a person can read.
    public static func failure(_ error: Error) -> DeviceResponse { DeviceResponse(ok: false, message: describe(error)) }

    /// One line a person can read for any error the engine or the client raises.
    public static func describe(_ error: Error) -> String {
        switch error {
        case let e as EngineError: return e.message
        case let e as CoreError: return e.message
        case let e as ClientError: return e.code == .serverUnreachable ? "cannot reach the server: \(e.message)" : e.message
        default: return "\(error)"
        }
    }
}

extension DeviceConfig {
    /// A client of the server, signed in as this device (trusting what `login --ca-cert` trusted).
    public var apiClient: UbiqAPIClient { UbiqAPIClient(baseURL: server, token: token, trusting: serverCertificates) }
}
