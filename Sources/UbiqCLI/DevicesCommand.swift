import ArgumentParser
import Foundation
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqProtocol

/// `ubiq devices [--json]`, `ubiq devices revoke NAME`: the account's devices, seen from one of them.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "List the account's devices, or revoke one (a lost laptop).",
                                                    subcommands: [DevicesList.self, DevicesRevoke.self], defaultSubcommand: DevicesList.self)
}

struct DevicesList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the account's devices.")
    @Flag(name: .long, help: "Print JSON.") var json = false
    @OptionGroup var home: HomeOption

    func run() async throws {
        let (_, config) = try home.config()
        let devices = try await mapClient { try await config.apiClient.devices() }
        if json { return try printJSON(devices) }
        printDevices(devices)
    }
}

struct DevicesRevoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Sign another device of the account out for good.")
    @Argument(help: "The device's name or ID (see 'ubiq devices').") var device: String
    @OptionGroup var home: HomeOption

    func run() async throws {
        let (_, config) = try home.config()
        let client = config.apiClient
        let all = try await mapClient { try await client.devices() }
        let matches = all.filter { $0.id.description == device.lowercased() || $0.name == device }
        guard let d = matches.first else { throw CLIError(.notFound, "no device '\(device)' on this account (see 'ubiq devices')") }
        guard matches.count == 1 else { throw CLIError(.invalidValue, "\(matches.count) devices are named '\(device)'; give the device's ID") }
        guard !d.current else { throw CLIError(.invalidRequest, "that is this device; use 'ubiq logout' to sign it out") }
        try await mapClient { try await client.revoke(device: d.id) }
        print("revoked \(d.name) (\(d.id))")
    }
}
