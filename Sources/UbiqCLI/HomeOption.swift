import ArgumentParser
import Foundation
import UbiqEngine
import UbiqProtocol

/// `--home DIR` (else `$UBIQ_HOME`, else XDG).
struct HomeOption: ParsableArguments {
    @Option(name: .long, help: "The device's home folder (default: $UBIQ_HOME, else the XDG locations).")
    var home: String?

    func resolve() -> DeviceHome { DeviceHome.resolve(explicit: home, environment: ProcessInfo.processInfo.environment) }

    /// The signed-in configuration, or a clear error.
    func config() throws -> (DeviceHome, DeviceConfig) {
        let h = resolve()
        guard let c = try DeviceConfig.load(h) else { throw CLIError(.unauthorized, "not signed in: run 'ubiq login URL --user NAME' first") }
        return (h, c)
    }
}

/// Prints a JSON document on stdout.
func printJSON<T: Encodable>(_ value: T) throws {
    let e = WireCoding.encoder()
    e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    print(String(decoding: try e.encode(value), as: UTF8.self))
}
