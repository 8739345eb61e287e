import ArgumentParser
import Foundation
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
import UbiqProtocol
#if canImport(Glibc)
import Glibc
#endif

/// One version as `ubiq versions --json` prints it.
struct VersionLine: Codable {
    var id: String
    var size: Int
    var modified: Date
    var device: String
    var hash: String
    init(_ v: VersionRecord) { id = v.id.description; size = v.size; modified = v.modified; device = v.deviceName; hash = v.hash.hex }
}

/// `ubiq versions --json`
struct VersionsDocument: Codable {
    var path: String
    var itemID: String
    var current: VersionLine?
    var conflicts: [VersionLine]
    var others: [VersionLine]
}

/// `ubiq versions PATH [--json]`
struct VersionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "versions", abstract: "The current version, unresolved conflict versions and history of an item.")
    @Argument(help: "Path in the container folder, e.g. Documents/notes.txt.") var path: String
    @Flag(name: .long, help: "Print one JSON document.") var json = false
    @OptionGroup var home: HomeOption

    func run() async throws {
        guard let v = try await DeviceSession.require(home, .versions(path: path)).versions else { throw CLIError(.badResponse, "no versions in the answer") }
        let doc = VersionsDocument(path: v.item.path.string, itemID: v.item.id.description, current: v.current.map(VersionLine.init),
                                   conflicts: v.conflicts.map(VersionLine.init), others: v.others.map(VersionLine.init))
        if json { try printJSON(doc); return }
        print(doc.path + (doc.conflicts.isEmpty ? "" : "  (\(doc.conflicts.count) unresolved conflict\(doc.conflicts.count == 1 ? "" : "s"))"))
        func show(_ label: String, _ l: VersionLine) {
            print("  \(label.padding(toLength: 9, withPad: " ", startingAt: 0)) \(l.id)  \(ByteSize.format(Int64(l.size)).padding(toLength: 9, withPad: " ", startingAt: 0))  \(KVDateFormat.format(l.modified))  \(l.device)")
        }
        if let c = doc.current { show("current", c) }
        for c in doc.conflicts { show("conflict", c) }
        for o in doc.others { show("history", o) }
        if !doc.conflicts.isEmpty { print("keep one with: ubiq resolve \(doc.path) --keep VERSION_ID") }
    }
}

/// `ubiq resolve PATH --keep VERSION_ID`
struct ResolveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resolve", abstract: "Make one version (current, conflict or history) the current one on every device, keep both, or merge a text conflict.")
    @Argument(help: "Path in the container folder.") var path: String
    @Option(name: .long, help: "The version to keep (from 'ubiq versions PATH').") var keep: String?
    @Flag(name: .long, help: "Keep the current version, and every conflict version as a document beside it ('NAME (conflict from DEVICE DATE).EXT').")
    var keepBoth = false
    @Flag(name: .long, help: "Merge a text conflict line by line against the version both sides were edited from, and open the result in $VISUAL/$EDITOR before it is kept.")
    var merge = false
    @Option(name: .long, help: "With --merge: the conflict version to merge (when there are several).") var conflict: String?
    @Flag(name: .long, help: "With --merge: keep a merge that has no conflicting hunks without opening an editor.") var noEdit = false
    @OptionGroup var home: HomeOption

    func validate() throws {
        guard [keep != nil, keepBoth, merge].filter({ $0 }).count == 1 else { throw ValidationError("give one of --keep VERSION_ID, --keep-both or --merge") }
        if let keep, VersionID(string: keep) == nil { throw ValidationError("--keep takes a version ID (see 'ubiq versions PATH')") }
        if let conflict, VersionID(string: conflict) == nil { throw ValidationError("--conflict takes a version ID (see 'ubiq versions PATH')") }
        if (conflict != nil || noEdit) && !merge { throw ValidationError("--conflict and --no-edit go with --merge") }
    }

    func run() async throws {
        if merge { return try await MergeCommandFlow(path: path, version: conflict, edit: !noEdit, home: home).run() }
        guard let keep else {
            let r = try await DeviceSession.require(home, .keepBoth(path: path))
            for p in r.results ?? [] { print("kept beside it: \(p.path)") }
            return
        }
        let r = try await DeviceSession.require(home, .resolve(path: path, keep: keep))
        let left = r.item?.conflictCount ?? 0
        print("kept \(keep) for \(r.item?.path.string ?? path)\(left > 0 ? "; \(Counted.of(left, "conflict")) \(left == 1 ? "remains" : "remain")" : "")")
    }
}

/// Prints per-path results and fails (exit 1, first reason) if any path failed.
func report(_ r: DeviceResponse, done: String) throws {
    for p in r.results ?? [] where p.error == nil { print("\(done) \(p.path)") }
    if !r.ok { throw CLIError(.invalidRequest, r.message ?? "failed") }
}

/// `ubiq download PATH…`
struct DownloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "download", abstract: "Fetch the content of items (a folder: everything in it).")
    @Argument(help: "Paths in the container folder.") var paths: [String]
    @OptionGroup var home: HomeOption
    func validate() throws { if paths.isEmpty { throw ValidationError("name at least one path") } }
    func run() async throws { try report(try await DeviceSession.perform(home, .download(paths: paths)), done: "downloaded") }
}

/// `ubiq evict PATH…`
struct EvictCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "evict", abstract: "Drop the local content of items; they stay listed as not downloaded.")
    @Argument(help: "Paths in the container folder.") var paths: [String]
    @OptionGroup var home: HomeOption
    func validate() throws { if paths.isEmpty { throw ValidationError("name at least one path") } }
    func run() async throws { try report(try await DeviceSession.perform(home, .evict(paths: paths)), done: "evicted") }
}

/// `ubiq pin PATH…` / `ubiq pin --off PATH…`
struct PinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pin",
                                                    abstract: "Keep items on this device (a folder: everything in it, files added later too); new versions are fetched as they come.")
    @Argument(help: "Paths in the container folder.") var paths: [String]
    @Flag(name: .customLong("off"), help: "Stop keeping them (the content stays until evicted).") var off = false
    @OptionGroup var home: HomeOption
    func validate() throws { if paths.isEmpty { throw ValidationError("name at least one path") } }
    func run() async throws { try report(try await DeviceSession.perform(home, .pin(paths: paths, on: !off)), done: off ? "unpinned" : "pinned") }
}

/// `ubiq retry [PATH…]`
struct RetryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "retry",
                                                    abstract: "Try failing items again now instead of after their retry delay (all of them when no path is given).")
    @Argument(help: "Paths in the container folder (a folder: everything in it).") var paths: [String] = []
    @OptionGroup var home: HomeOption
    func run() async throws {
        let r = try await DeviceSession.perform(home, .retry(paths: paths))
        guard r.ok else { throw CLIError(.invalidRequest, r.message ?? "failed") }
        print(r.message ?? "")
    }
}

/// `ubiq pause [PATH…]` / `ubiq resume [PATH…]`: for the daemon (or front end) running on the home.
struct PauseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pause",
                                                    abstract: "Pause syncing in the running daemon or front end until `ubiq resume` (or it restarts).",
                                                    discussion: "With paths, only the uploads and downloads of the files at or under them wait; everything else syncs.")
    @Argument(help: "Files or folders whose transfers wait (none: all syncing pauses).") var paths: [String] = []
    @OptionGroup var home: HomeOption
    func run() async throws { try await Self.ask(home, pause: true, paths: paths) }

    static func ask(_ home: HomeOption, pause: Bool, paths: [String]) async throws {
        let (h, config) = try home.config()
        if let lock = try HomeLock.acquire(h) {
            withExtendedLifetime(lock) {}
            throw CLIError(.invalidRequest, "no daemon or front end runs on this home: nothing is syncing to \(pause ? "pause" : "resume")")
        }
        if !paths.isEmpty {
            try report(try await DaemonAnswer.ask(h, explicitHome: home.home, .hold(paths: paths, on: pause), container: config.container, onEvent: { _ in true }),
                       done: pause ? "paused" : "resumed")
            return
        }
        let r = try await DaemonAnswer.ask(h, explicitHome: home.home, .pause(on: pause), container: config.container, onEvent: { _ in true })
        guard r.ok else { throw CLIError(.invalidRequest, r.message ?? "failed") }
        print(r.message ?? "")
    }
}

/// `ubiq resume [PATH…]`
struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resume", abstract: "Resume syncing paused with `ubiq pause` (with paths: those files' transfers).")
    @Argument(help: "Files or folders whose transfers go on (none: all syncing resumes).") var paths: [String] = []
    @OptionGroup var home: HomeOption
    func run() async throws { try await PauseCommand.ask(home, pause: false, paths: paths) }
}

/// `ubiq rm PATH… [--yes]`
struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete items from every device (kept in the server's trash for 30 days).")
    @Argument(help: "Paths in the container folder.") var paths: [String]
    @Flag(name: .long, help: "Do not ask for confirmation.") var yes = false
    @OptionGroup var home: HomeOption
    func validate() throws { if paths.isEmpty { throw ValidationError("name at least one path") } }

    func run() async throws {
        if !yes {
            guard isatty(0) != 0 else {
                throw CLIError(.invalidRequest, "refusing to delete without confirmation: no terminal to ask; add --yes to remove \(paths.count == 1 ? paths[0] : "\(paths.count) items") from all devices")
            }
            let what = paths.count == 1 ? paths[0] : "\(paths.count) items"
            print("Remove \(what) from all devices? It stays in the server's trash for 30 days. [y/N] ", terminator: "")
            fflush(nil)
            let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            guard answer == "y" || answer == "yes" else { print("nothing removed"); return }
        }
        try report(try await DeviceSession.perform(home, .remove(paths: paths)), done: "removed")
    }
}

/// `ubiq trash [ls|restore PATH|empty [--yes]]`
struct TrashCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "trash", abstract: "Items deleted from every device, and how to bring them back.",
                                                    subcommands: [List.self, Restore.self, Empty.self], defaultSubcommand: List.self)

    struct Empty: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "empty", abstract: "Purge the trash now: nothing in it can be restored afterwards.")
        @Flag(name: .long, help: "Do not ask (needed when standard input is not a terminal).") var yes = false
        @OptionGroup var home: HomeOption
        func run() async throws {
            if !yes {
                guard isatty(0) != 0 else { throw CLIError(.invalidRequest, "emptying the trash cannot be undone: pass --yes (standard input is not a terminal)") }
                let items = try await DeviceSession.require(home, .trash).trash ?? []
                if items.isEmpty { print("the trash is empty"); return }
                print("Purge \(Counted.of(items.count, "item")) from the trash for good? Nothing in it can be restored afterwards. Type 'empty' to go on: ", terminator: "")
                fflush(nil)
                guard readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces) == "empty" else { print("nothing purged"); return }
            }
            let r = try await DeviceSession.require(home, .emptyTrash)
            let e = r.emptied ?? TrashEmptied(items: 0, bytes: 0)
            print("purged \(Counted.of(e.items, "item")); \(ByteSize.format(e.bytes)) of quota given back")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the trash.")
        @Flag(name: .long, help: "Print one JSON document.") var json = false
        @OptionGroup var home: HomeOption
        func run() async throws {
            let items = try await DeviceSession.require(home, .trash).trash ?? []
            if json { try printJSON(items.map(TrashLine.init)); return }
            if items.isEmpty { print("the trash is empty"); return }
            for i in items {
                print("\(i.deletedAt.map(KVDateFormat.format) ?? "?")  \(i.kind == .folder ? "folder" : ByteSize.format(Int64(i.current?.size ?? 0)))  \(i.path)")
            }
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "restore", abstract: "Bring an item back on every device, with its history.")
        @Argument(help: "The item's path when it was deleted.") var path: String
        @OptionGroup var home: HomeOption
        func run() async throws {
            let r = try await DeviceSession.require(home, .restore(path: path))
            print("restored \(r.item?.path.string ?? path)")
        }
    }
}

/// One trash entry as `ubiq trash ls --json` prints it.
struct TrashLine: Codable {
    var path: String
    var itemID: String
    var kind: String
    var size: Int
    var deleted: Date?
    init(_ i: ItemRecord) { path = i.path.string; itemID = i.id.description; kind = i.kind.rawValue; size = i.current?.size ?? 0; deleted = i.deletedAt }
}
