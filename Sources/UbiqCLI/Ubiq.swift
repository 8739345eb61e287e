import ArgumentParser
import Foundation
import UbiqCore
import UbiqServer
import UbiqStorage
import UbiqEngine
#if canImport(Glibc)
import Glibc
#endif

/// `ubiq`: the one executable.
public struct Ubiq: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "ubiq",
        abstract: "Ubiquity: self-hosted iCloud-Drive-style sync for Linux.",
        version: "0.1.0",
        subcommands: [ServerCommand.self, LoginCommand.self, LogoutCommand.self, DevicesCommand.self, DaemonCommand.self, SyncCommand.self, StatusCommand.self,
                      ListCommand.self, DownloadCommand.self, EvictCommand.self, PinCommand.self, RetryCommand.self, PauseCommand.self, ResumeCommand.self, VersionsCommand.self, ResolveCommand.self,
                      RemoveCommand.self, TrashCommand.self, KVCommand.self, TUICommand.self, DemoCommand.self, ThemesCommand.self, ConfigCommand.self, ServiceCommand.self, ContainersCommand.self, EncryptCommand.self, RekeyCommand.self]
    )
    public init() {}

    /// Parses `arguments`, runs the command and exits with the contract's status:
    /// 0 success, 1 failure (one line on stderr), 2 bad usage.
    public static func mainWithExitCodes(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) async -> Never {
        // Plain `ubiq` on a terminal opens the front end.
        let arguments = arguments.isEmpty && isatty(0) != 0 && isatty(1) != 0 ? ["tui"] : arguments
        ProcessMemory.tune()
        ProcessMemory.trimPeriodically()
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            Foundation.exit(0)
        } catch {
            Foundation.exit(report(error))
        }
    }

    /// Prints an error and returns the exit status for it.
    static func report(_ error: Error) -> Int32 {
        func line(_ s: String) {
            let s = TerminalText.errorsGoToTerminal ? TerminalText.safe(s) : s
            FileHandle.standardError.write(Data((s.hasSuffix("\n") ? s : s + "\n").utf8))
        }
        switch error {
        case let e as CLIError: line("ubiq: \(e.message)"); return 1
        case let e as CoreError: line("ubiq: \(e.message)"); return 1
        case let e as StorageError: line("ubiq: \(e.message)"); return 1
        case let e as APIFailure: line("ubiq: \(e.message)"); return 1
        case let e as EngineError: line("ubiq: \(e.message)"); return 1
        case let e as ExitCode: return e.rawValue
        default:
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { print(message) }
                return 0
            }
            if code == .validationFailure {
                line(message)
                return 2
            }
            line("ubiq: \(message.isEmpty ? String(describing: error) : message)")
            return 1
        }
    }
}
