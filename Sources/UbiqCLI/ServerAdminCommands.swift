import ArgumentParser
import Foundation
import UbiqCore
import UbiqProtocol
import UbiqServer
import UbiqStorage

/// A password for `user add` / `user passwd`: the first line of stdin, or a generated one.
enum PasswordInput {
    static func read(fromStdin: Bool) throws -> (password: String, generated: Bool) {
        guard fromStdin else { return (generate(), true) }
        guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw CLIError(.invalidValue, "no password on standard input") }
        return (line, false)
    }

    /// 20 characters from an unambiguous alphabet (about 100 bits).
    static func generate() -> String {
        let alphabet = Array("abcdefghijkmnpqrstuvwxyzACDEFGHJKLMNPQRSTUVWXYZ23456789")
        var rng = SystemRandomNumberGenerator()
        return String((0..<20).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &rng)] })
    }
}

/// An account as `ubiq server user list --json` prints it.
struct UserListing: Encodable {
    let name: String
    let quota: Int64
    let used: Int64
    let devices: Int
    let created: Date
}

/// `ubiq server user list [--json]`
struct UserList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the accounts with their quota, use and signed-in devices.")
    @Flag(name: .long, help: "Print JSON.") var json = false
    @OptionGroup var data: DataOption

    func run() async throws {
        let users = try await data.services().users()
        if json { return try printJSON(users.map { UserListing(name: $0.name, quota: $0.quota, used: $0.used, devices: $0.devices, created: $0.created) }) }
        if users.isEmpty { print("no users (add one with 'ubiq server user add NAME')") }
        for u in users {
            print("\(u.name)  \(ByteSize.format(u.used)) of \(ByteSize.format(u.quota))  \(Counted.of(u.devices, "device")) signed in")
        }
    }
}

/// `ubiq server user passwd NAME [--password-stdin] [--sign-out]`
struct UserPasswd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "passwd", abstract: "Set a new password (prints a generated one unless one is given).")
    @Argument(help: "User name.") var name: String
    @Flag(name: .long, help: "Read the password from the first line of standard input.") var passwordStdin = false
    @Flag(name: .long, help: "Sign every device of the account out (each must sign in again).") var signOut = false
    @OptionGroup var data: DataOption

    func run() async throws {
        let (password, generated) = try PasswordInput.read(fromStdin: passwordStdin)
        try await data.services().setPassword(user: name, password: password, signOut: signOut)
        print("password of \(name) changed\(signOut ? "; every device is signed out" : "")")
        if generated { print("password: \(password)") }
    }
}

/// `ubiq server user quota NAME SIZE`
struct UserQuota: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "quota", abstract: "Set an account's storage quota.")
    @Argument(help: "User name.") var name: String
    @Argument(help: "Quota, e.g. 5GiB, 500MB.") var size: String
    @OptionGroup var data: DataOption

    func run() async throws {
        let bytes = try ByteSize.parse(size)
        try await data.services().setQuota(user: name, quota: bytes)
        print("quota of \(name) is \(ByteSize.format(bytes))")
    }
}

/// `ubiq server user delete NAME --yes`
struct UserDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete an account and everything it holds (no undo).")
    @Argument(help: "User name.") var name: String
    @Flag(name: .long, help: "Confirm: the account's files, versions, trash and settings are deleted for good.") var yes = false
    @OptionGroup var data: DataOption

    func run() async throws {
        guard yes else { throw CLIError(.invalidRequest, "this deletes every file, version and setting of \(name) for good; add --yes to confirm") }
        try await data.services().deleteUser(name)
        print("deleted user \(name)")
    }
}

/// `ubiq server device list|revoke …`
struct DeviceAdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "device", abstract: "List or revoke an account's devices.",
                                                    subcommands: [DeviceAdminList.self, DeviceAdminRevoke.self])
}

/// `ubiq server device list USER [--json]`
struct DeviceAdminList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List an account's devices.")
    @Argument(help: "User name.") var user: String
    @Flag(name: .long, help: "Print JSON.") var json = false
    @OptionGroup var data: DataOption

    func run() async throws {
        let devices = try await data.services().devices(user: user).map {
            DeviceInfo(id: $0.id, name: $0.name, created: $0.created, lastSeen: $0.lastSeen, signedIn: $0.signedIn, current: false)
        }
        if json { return try printJSON(devices) }
        printDevices(devices)
    }
}

/// `ubiq server device revoke USER DEVICE`
struct DeviceAdminRevoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Sign a device out for good (a lost laptop); its push channel closes within seconds.")
    @Argument(help: "User name.") var user: String
    @Argument(help: "The device's name or ID.") var device: String
    @OptionGroup var data: DataOption

    func run() async throws {
        let d = try await data.services().revokeDevice(user: user, device: device)
        print("revoked \(d.name) (\(d.id)) of \(user)")
    }
}

/// Devices as lines: name, ID, last seen, signed in or not.
func printDevices(_ devices: [DeviceInfo]) {
    let f = ISO8601DateFormatter()
    for d in devices {
        let state = d.signedIn ? "signed in" : "revoked"
        print("\(d.name)\(d.current ? " (this device)" : "")  \(d.id)  last sign-in \(f.string(from: d.lastSeen))  \(state)")
    }
}
