import ArgumentParser
import Foundation
import UbiqServer

/// `ubiq server key [show|rotate]`: the key chunks are sealed with at rest.
struct ServerKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "The server key chunks are sealed with at rest.",
        discussion: "Every chunk the server stores is sealed (AES-256-GCM) with the current key of its key file (--key-file, UBIQ_SERVER_KEY_FILE, or server.key in the data directory, made on the first start). Keep a copy of the file apart from the chunks: without it they cannot be read.",
        subcommands: [ServerKeyShow.self, ServerKeyRotate.self],
        defaultSubcommand: ServerKeyShow.self
    )
}

/// `ubiq server key show`
struct ServerKeyShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show the key file, its keys and whether chunks still wait to be sealed with the current one.")
    @OptionGroup var data: DataOption
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() async throws {
        let services = try await data.services()
        defer { Task { await services.close() } }
        let state = try await services.keyState()
        if json {
            try printJSON(KeyListing(file: state.file, current: state.ids[0], older: Array(state.ids.dropFirst()), resealDue: state.resealDue))
        } else {
            print("key file: \(state.file)")
            print("current key: \(state.ids[0])")
            if state.ids.count > 1 { print("older keys (to open what they sealed): \(state.ids.dropFirst().joined(separator: ", "))") }
            print(state.resealDue ? "some chunks may be sealed with an older key or none: the server seals them again in the background when it starts"
                                  : "every chunk is sealed with the current key")
        }
    }
}

/// The key file as `ubiq server key show --json` prints it.
struct KeyListing: Codable {
    var file: String
    var current: String
    var older: [String]
    var resealDue: Bool
}

/// `ubiq server key rotate`
struct ServerKeyRotate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate",
        abstract: "Put a new key in front of the key file; the server seals with it from its next start.",
        discussion: "The older keys stay in the file to open what they sealed; at its next start the server seals those chunks again with the new key, in the background. Servers sharing a database: copy the new key file to every one of them before restarting any.")
    @OptionGroup var data: DataOption

    func run() async throws {
        let services = try await data.services()
        defer { Task { await services.close() } }
        let id = try await services.rotateKey()
        print("the key file \(services.keyFile ?? "") now seals with key \(id); restart the server to use it (servers sharing a database: copy the file to each first)")
    }
}
