import ArgumentParser
import Foundation
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine

/// `ubiq containers [--json]`: the containers this device syncs, each with its folder and state.
struct ContainersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "containers", abstract: "The containers this device syncs, with their folders and state.")
    @Flag(name: .long, help: "Print JSON.") var json = false
    @OptionGroup var home: HomeOption

    func run() async throws {
        let (h, config) = try home.config()
        var list: [ContainerState]
        if let lock = try HomeLock.acquire(h) {
            withExtendedLifetime(lock) {}
            list = config.containers.map { ContainerState(id: $0.string, folder: h.containerFolder($0).path, isDefault: $0 == (try? DeviceConfig.load(h))??.container,
                                                           state: "stopped", idle: false) }
        } else {
            let r = try await DaemonAnswer.ask(h, explicitHome: home.home, .containers)
            guard r.ok, let listed = r.containers else { throw CLIError(.invalidRequest, r.message ?? "the daemon did not list its containers") }
            list = listed
        }
        if json { return try printJSON(list) }
        for c in list {
            let state = c.state == "stopped" ? "not syncing (no daemon)" : c.idle ? "\(c.state), in sync" : "\(c.state), syncing"
            print("\(c.isDefault ? "*" : " ") \(c.id.padding(toLength: max(24, c.id.count), withPad: " ", startingAt: 0))  \(state)  \(c.folder)")
        }
    }
}
