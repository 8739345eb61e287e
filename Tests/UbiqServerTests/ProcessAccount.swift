import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqTesting

/// A real `ubiq server` process with one account, and its devices' homes in one temporary folder
/// — what the process tests of encrypted accounts each set up. `stop()` kills the server and
/// removes the folder.
struct ProcessAccount {
    let dir: TempDirectory
    let server: ChildProcess
    let url: String
    let user: String
    var password: String { "pw-\(user)" }

    /// Adds `user` to a fresh data folder and starts a server on it.
    init(_ tests: ProcessTests, user: String, label: String) throws {
        dir = try TempDirectory(label)
        let data = dir.url.appendingPathComponent("d").path
        let (status, _, err) = try ChildProcess.runUbiq(["server", "user", "add", user, "--password-stdin", "--data", data], stdin: "pw-\(user)\n")
        guard status == 0 else { dir.remove(); throw CoreError(.internalError, "user add: \(err)") }
        (server, url) = try tests.startServer(data)
        self.user = user
    }

    func stop() {
        server.signal(SIGKILL)
        server.wait()
        dir.remove()
    }

    /// Device `n`'s home, and its synced Documents folder.
    func home(_ n: String) -> String { dir.url.appendingPathComponent(n).path }
    func docs(_ n: String) -> URL { URL(fileURLWithPath: home(n)).appendingPathComponent("Ubiquity/iCloud.default/Documents") }

    /// Device `n`'s config as JSON (empty when it has none).
    func config(_ n: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: home(n)).appendingPathComponent("config/config.json"))) as? [String: Any] ?? [:]
    }

    /// The key ring device `n` keeps.
    func ring(_ n: String) throws -> AccountKeyring { try AccountKeyring(text: try #require(try config(n)["accountKey"] as? String)) }

    /// A client signed in as device `n`.
    func client(_ n: String) throws -> UbiqAPIClient { UbiqAPIClient(baseURL: url, token: try #require(try config(n)["token"] as? String)) }

    /// `ubiq login` of device `n` (named `n`), the password on standard input.
    func login(_ n: String, _ extra: [String] = []) throws -> (Int32, String, String) {
        try ChildProcess.runUbiq(["login", url, "--user", user, "--password-stdin", "--home", home(n), "--device", n] + extra, stdin: password + "\n")
    }

    /// `ubiq ARGS --home HOME(n)`.
    func ubiq(_ n: String, _ args: [String], environment: [String: String]? = nil) throws -> (Int32, String, String) {
        try ChildProcess.runUbiq(args + ["--home", home(n)], environment: environment)
    }

    /// The recovery key a command printed (six groups of five), if any.
    static func recoveryKey(in out: String) -> String? {
        out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.count == 35 && $0.split(separator: "-").count == 6 }
    }
}
