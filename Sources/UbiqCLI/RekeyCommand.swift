import ArgumentParser
import Foundation
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine

/// `ubiq rekey [--roll] [--container ID]`: on an end-to-end encrypted account, what was sealed
/// with an older generation of the account's key (before `devices revoke` rolled it) sealed
/// again with the newest — each document's current version as a new version (the same content;
/// other devices place it from their own copies' chunks), and every setting written again. With
/// `--roll`, a new generation is made first (a key that may have been seen). Every container
/// this device syncs, or the one `--container` names.
struct RekeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rekey",
        abstract: "On an encrypted account: seal documents and settings sealed with an older key again with the newest.")
    @Flag(name: .long, help: "Make a new generation of the account's key first, sealed to every device on the account's list.")
    var roll = false
    @OptionGroup var home: HomeOption

    func run() async throws {
        let (h, config) = try home.config()
        guard config.accountKey != nil else {
            throw CLIError(.invalidRequest, "this account is not encrypted end to end: there is nothing to seal again ('ubiq encrypt' encrypts it)")
        }
        guard var ring = try await freshRing(home: h, config: config) else { throw CLIError(.keyMissing, "this device holds no key of the account") }
        if roll {
            let devices = try await mapClient { try await config.apiClient.devices() }
            ring = try await DevicesRevoke.roll(home: h, config: config, revoking: nil, devices: devices) ?? ring
        }
        guard ring.keys.count > 1 else {
            print("nothing to seal again: everything is sealed with the account's only key (epoch \(ring.current.epoch)); 'ubiq rekey --roll' makes a new one first")
            return
        }
        let containers = try home.containerID().map { [$0] } ?? config.containers
        var incomplete = 0
        for id in containers {
            var one = home
            one.container = id.string
            let r = try await DeviceSession.perform(one, .rekey)
            print("\(id): \(TerminalText.safe(r.message ?? (r.ok ? "done" : "failed")))")
            if !r.ok { incomplete += 1 }
        }
        if incomplete > 0 {
            throw CLIError(.invalidRequest, "\(Counted.of(incomplete, "container")) not wholly sealed with epoch \(ring.current.epoch) yet (see above)")
        }
    }
}
