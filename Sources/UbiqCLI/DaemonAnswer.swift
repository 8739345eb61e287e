import Foundation
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
@_spi(UbiqTools) import Ubiquity

/// Asking the daemon that holds a home — through the `Ubiquity` library, like any program. A
/// daemon that has just started holds the home's lock a moment before its socket answers (it
/// opens its state and scans first): a command waits for it, saying so on a terminal, instead
/// of failing — a service start followed at once by a command is the ordinary case.
enum DaemonAnswer {
    static let patience: Duration = .seconds(15)

    /// The daemon's answer to `request`, waiting up to `patience` for its socket.
    static func ask(_ home: DeviceHome, explicitHome: String?, _ request: DeviceRequest, container: ContainerID? = nil,
                    onEvent: @escaping @Sendable (DeviceResponse) -> Bool = { _ in true }) async throws -> DeviceResponse {
        do {
            return try await Ubiquity(device: home, explicitHome: explicitHome).send(request, container: container, patience: patience, waiting: {
                if isatty(2) != 0 { FileHandle.standardError.write(Data("waiting for the daemon to answer…\n".utf8)) }
            }, onEvent: { onEvent($0) })
        } catch let e as UbiquityError where e.code == .noDaemon {
            throw CLIError(.invalidRequest, "another engine holds this home but has not answered for \(Int(patience.components.seconds)) s (is 'ubiq daemon' stuck? see \(home.logFile.path))")
        } catch let e as UbiquityError {
            throw CLIError(.invalidRequest, e.message)
        }
    }
}
