import Foundation
import UbiqCore
import UbiqEngine

/// Asking the daemon that holds a home. A daemon that has just started holds the home's lock a
/// moment before its socket answers (it opens its state and scans first): a command waits for
/// it, saying so on a terminal, instead of failing — a service start followed at once by a
/// command is the ordinary case.
enum DaemonAnswer {
    static let patience: Duration = .seconds(15)

    /// The daemon's answer to `request`, waiting up to `patience` for its socket.
    static func ask(_ home: DeviceHome, _ request: DeviceRequest, container: ContainerID? = nil,
                    onEvent: @escaping @Sendable (DeviceResponse) -> Bool = { _ in true }) async throws -> DeviceResponse {
        let end = ContinuousClock.now + patience
        var said = false
        while true {
            if let r = try? await DaemonClient(socketPath: home.socketPath).send(request, container: container, onEvent: { onEvent($0) }) { return r }
            if ContinuousClock.now >= end {
                throw CLIError(.invalidRequest, "another engine holds this home but has not answered for \(Int(patience.components.seconds)) s (is 'ubiq daemon' stuck? see \(home.logFile.path))")
            }
            if !said && isatty(2) != 0 {
                FileHandle.standardError.write(Data("waiting for the daemon to answer…\n".utf8))
                said = true
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
