import ArgumentParser
import Foundation
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
import UbiqProtocol

/// `--home DIR` (else `$UBIQ_HOME`, else XDG).
struct HomeOption: ParsableArguments {
    @Option(name: .long, help: "The device's home folder (default: $UBIQ_HOME, else the XDG locations).")
    var home: String?

    @Option(name: .long, help: "The container to act on (default: the device's first; a new one is added and synced from now on).")
    var container: String?

    func validate() throws {
        if let container { do { _ = try ContainerID(validating: container) } catch let e as CoreError { throw ValidationError(e.message) } }
    }

    func resolve() -> DeviceHome { DeviceHome.resolve(explicit: home, environment: ProcessInfo.processInfo.environment) }

    /// The container `--container` names, if any.
    func containerID() throws -> ContainerID? {
        do { return try container.map(ContainerID.init(validating:)) } catch let e as CoreError { throw CLIError(.invalidContainer, e.message) }
    }

    /// The signed-in configuration acting on the chosen container (added to the device's
    /// containers when new), or a clear error.
    func config() throws -> (DeviceHome, DeviceConfig) {
        let h = resolve()
        guard var c = try DeviceConfig.load(h) else { throw CLIError(.unauthorized, "not signed in: run 'ubiq login URL --user NAME' first") }
        if let id = try containerID() {
            do {
                if try c.adding(id) {
                    try c.save(h)
                    try FileManager.default.createDirectory(at: h.containerFolder(id).appendingPathComponent("Documents"), withIntermediateDirectories: true)
                }
            } catch let e as CoreError { throw CLIError(e.code, e.message) }
            c = c.acting(on: id)
        }
        return (h, c)
    }
}

/// Prints a JSON document on stdout.
func printJSON<T: Encodable>(_ value: T) throws {
    let e = WireCoding.encoder()
    e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    Swift.print(TerminalText.jsonEscaped(String(decoding: try e.encode(value), as: UTF8.self)))
}
