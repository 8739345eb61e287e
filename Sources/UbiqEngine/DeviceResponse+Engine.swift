import Foundation
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol

extension DeviceResponse {
    /// A refusal carrying one line a person can read.
    public static func failure(_ error: Error) -> DeviceResponse {
        var r = DeviceResponse(ok: false, message: describe(error))
        r.code = code(of: error)?.rawValue
        return r
    }

    /// The stable code of an error the engine or the client raises (nil: none known).
    public static func code(of error: Error) -> ErrorCode? {
        switch error {
        case let e as EngineError: return e.code
        case let e as CoreError: return e.code
        case let e as ClientError: return e.code
        default: return nil
        }
    }

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
