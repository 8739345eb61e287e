import ArgumentParser
import Foundation
import Ubiquity

/// `ubiq-notes`: a small notes app for the terminal, written only against `import Ubiquity` —
/// the example of the library's guide. Notes are text files in the notes container's
/// `Documents/Notes/`; a live query lists them, edits happen under file coordination, conflicts
/// are shown and resolved, and the sort order is a synced setting.
@main
struct Notes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ubiq-notes", abstract: "Notes synced by Ubiquity (an example of `import Ubiquity`).",
        subcommands: [List.self, Watch.self, Write.self, Show.self, Conflicts.self, KeepBoth.self, Setting.self], defaultSubcommand: List.self)

    /// The container the notes live in.
    static let container = "TEAM.com.example.notes"
}

struct Place: ParsableArguments {
    @Option(name: .long, help: "The device's home (as ubiq --home; default: $UBIQ_HOME, else the XDG folders).") var home: String?

    var ubiquity: Ubiquity { home.map { Ubiquity(home: URL(fileURLWithPath: $0)) } ?? .standard }

    /// The notes folder, made if new.
    func folder() async throws -> URL {
        guard let container = await ubiquity.containerURL(Notes.container) else {
            throw ValidationError("no Ubiquity daemon answers: start one with 'ubiq daemon' (after 'ubiq login')")
        }
        let notes = container.appendingPathComponent("Documents/Notes", isDirectory: true)
        try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
        return notes
    }

    func note(_ title: String) async throws -> URL {
        guard !title.isEmpty, !title.contains("/"), !title.hasPrefix("."), title.utf8.count <= 200 else {
            throw ValidationError("a title is 1–200 bytes, without '/' and not starting with '.'")
        }
        return try await folder().appendingPathComponent("\(title).txt")
    }

    /// The sort order the user chose on any device (a synced setting).
    func sort() async -> MetadataQuery.Sort {
        let chosen = try? await KeyValueStore(Notes.container, ubiquity: ubiquity).string(forKey: "notes.sort")
        return chosen.flatMap(MetadataQuery.Sort.init(rawValue:)) ?? .name
    }

    func query() async -> MetadataQuery {
        MetadataQuery(predicate: "path BEGINSWITH 'Documents/Notes/' AND name LIKE '*.txt'", scope: .documents, sort: await sort(),
                      container: Notes.container, ubiquity: ubiquity)
    }
}

/// One line per note: title, size, and what the device knows of it.
func line(_ item: MetadataItem) -> String {
    let title = String(item.name.dropLast(4))
    var flags: [String] = []
    if item.conflict { flags.append("CONFLICT") }
    if item.status == .notDownloaded { flags.append("in the cloud") }
    if item.downloading { flags.append("downloading \(Int(item.percentDownloaded))%") }
    if item.uploading { flags.append("uploading \(Int(item.percentUploaded))%") }
    return "\(title)\t\(item.size) B" + (flags.isEmpty ? "" : "\t" + flags.joined(separator: ", "))
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "The notes, in the synced sort order.")
    @OptionGroup var place: Place

    func run() async throws {
        _ = try await place.folder()
        let query = await place.query()
        for try await n in query.notifications() {
            if case .didFinishGathering = n { break }
        }
        for item in query.results { print(line(item)) }
    }
}

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "watch", abstract: "The notes, then each change as it happens (until stopped).")
    @OptionGroup var place: Place

    func run() async throws {
        _ = try await place.folder()
        for try await n in await place.query().notifications() {
            switch n {
            case .didFinishGathering(let items):
                for item in items { print("  \(line(item))") }
                print("-- \(items.count) note(s); watching")
            case .didUpdate(let added, let changed, let removed):
                for item in added { print("+ \(line(item))") }
                for item in changed { print("~ \(line(item))") }
                for item in removed { print("- \(item.name.dropLast(4))") }
            }
            fflush(nil)
        }
    }
}

struct Write: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "write", abstract: "Write a note (new or replaced), under coordination.")
    @OptionGroup var place: Place
    @Argument(help: "The note's title.") var title: String
    @Argument(help: "Its text (default: standard input).") var text: String?

    func run() async throws {
        let url = try await place.note(title)
        let body = text ?? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        try await FileCoordinator(ubiquity: place.ubiquity).coordinate(writingItemAt: url) { url in
            try Data(body.utf8).write(to: url, options: .atomic)
        }
        print("saved \(title)")
    }
}

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Print a note (downloading it first if needed), under coordination.")
    @OptionGroup var place: Place
    @Argument(help: "The note's title.") var title: String

    func run() async throws {
        let url = try await place.note(title)
        let ubiquity = place.ubiquity
        if try await ubiquity.status(of: url)?.status == .notDownloaded {
            try await ubiquity.startDownloading(url)
            var tries = 0
            while try await ubiquity.status(of: url)?.status != .current {
                tries += 1
                guard tries < 600 else { throw ValidationError("\(title) did not download within a minute (see 'ubiq status')") }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let text = try await FileCoordinator(ubiquity: ubiquity).coordinate(readingItemAt: url) { url in
            try String(contentsOf: url, encoding: .utf8)
        }
        print(text)
    }
}

struct Conflicts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "conflicts", abstract: "The versions of a note other devices made at the same time.")
    @OptionGroup var place: Place
    @Argument(help: "The note's title.") var title: String

    func run() async throws {
        let url = try await place.note(title)
        let versions = try await FileVersion.versions(of: url, ubiquity: place.ubiquity)
        if let c = versions.current { print("current\t\(c.deviceName)\t\(c.size) B\t\(c.id)") }
        for v in versions.unresolvedConflicts {
            let text = String(decoding: try await v.content(ubiquity: place.ubiquity), as: UTF8.self)
            print("conflict\t\(v.deviceName)\t\(v.size) B\t\(v.id)\t\(text.prefix(60).replacingOccurrences(of: "\n", with: " "))")
        }
        if versions.unresolvedConflicts.isEmpty { print("no conflicts") }
    }
}

struct KeepBoth: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "keep-both", abstract: "Resolve a note's conflicts by keeping every version as a note.")
    @OptionGroup var place: Place
    @Argument(help: "The note's title.") var title: String

    func run() async throws {
        let made = try await FileVersion.keepBoth(try await place.note(title), ubiquity: place.ubiquity)
        for u in made { print("kept as \(u.deletingPathExtension().lastPathComponent)") }
    }
}

struct Setting: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sort", abstract: "Show or set the synced sort order (name, size or modified).")
    @OptionGroup var place: Place
    @Argument(help: "name, size or modified.") var order: String?

    func run() async throws {
        let store = KeyValueStore(Notes.container, ubiquity: place.ubiquity)
        guard let order else {
            print((try await store.string(forKey: "notes.sort")) ?? "name")
            return
        }
        guard MetadataQuery.Sort(rawValue: order) != nil else { throw ValidationError("the order is name, size or modified") }
        let sent = try await store.set(.string(order), forKey: "notes.sort")
        print(sent ? "sort: \(order)" : "sort: \(order) (saved on this device; sent when the server is reachable)")
    }
}
