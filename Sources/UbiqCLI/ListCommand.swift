import ArgumentParser
import Foundation
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
import UbiqProtocol

/// `ubiq ls [PREDICATE] [--scope documents|data] [--sort name|size|modified] [--json] [--watch]`
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ls", abstract: "A metadata query over the container's items.")
    @Argument(help: "A predicate, e.g. \"name LIKE '*.txt' AND size > 1MB\" (default: everything).") var predicate: String?
    @Option(name: .long, help: "documents (only Documents/…) or data (the whole container).") var scope = "data"
    @Option(name: .long, help: "name, size or modified.") var sort = "name"
    @Flag(name: .long, help: "Print JSON.") var json = false
    @Flag(name: .long, help: "Keep printing each update until stopped.") var watch = false
    @OptionGroup var home: HomeOption

    func validate() throws {
        guard ["documents", "data"].contains(scope) else { throw ValidationError("--scope must be 'documents' or 'data'") }
        guard ["name", "size", "modified"].contains(sort) else { throw ValidationError("--sort must be 'name', 'size' or 'modified'") }
    }

    func run() async throws {
        let spec = QuerySpec(predicate: predicate, scope: scope, sort: sort)
        // A malformed predicate is reported before anything else happens.
        do { _ = try MetadataQueryDefinition(scope: scope, predicate: predicate, sort: sort) } catch let e as CoreError {
            throw CLIError(.invalidValue, e.message)
        }
        if watch {
            let json = self.json
            let r = try await DeviceSession.perform(home, .watch(query: spec), live: true) { response in
                guard let e = response.event else { return true }
                if json {
                    guard let data = try? WireCoding.encode(e) else { return false }
                    print(String(decoding: data, as: UTF8.self))
                } else {
                    if e.event == "gathered" { print("-- \(Counted.of(e.added.count, "item"))") }
                    for i in e.added { print("+ " + Self.line(i)) }
                    for i in e.changed { print("~ " + Self.line(i)) }
                    for i in e.removed { print("- " + Self.line(i)) }
                    if e.event == "gathered" { print("-- watching for changes (Ctrl-C to stop)") }
                }
                fflush(nil)
                return true
            }
            if !r.ok { throw CLIError(.invalidRequest, r.message ?? "the query stopped") }
            return
        }
        let items = try await DeviceSession.require(home, .list(query: spec)).items ?? []
        if json { try printJSON(items); return }
        for i in items { print(Self.line(i)) }
    }

    /// One item as a line: status glyph, size, date, path, markers.
    static func line(_ i: MetadataItem) -> String {
        let glyph: String
        if i.excluded { glyph = "x" } else if i.downloading { glyph = "↓" } else if i.uploading || !i.uploaded { glyph = "↑" } else {
            switch i.status { case .current: glyph = "✓"; case .downloaded: glyph = "~"; case .notDownloaded: glyph = "☁" }
        }
        let size = i.kind == .folder ? "-" : ByteSize.format(Int64(i.size))
        let date = i.modified.map(KVDateFormat.format) ?? ""
        var marks: [String] = []
        if i.conflict { marks.append("conflict") }
        if i.pinned { marks.append("pinned") }
        if i.paused { marks.append("paused") }
        if i.downloading { marks.append("\(Int(i.percentDownloaded))% down") }
        if i.uploading { marks.append("\(Int(i.percentUploaded))% up") }
        if let e = i.uploadError ?? i.downloadError { marks.append("error: \(e)") }
        return "\(glyph) \(size.padding(toLength: 9, withPad: " ", startingAt: 0)) \(date.padding(toLength: 24, withPad: " ", startingAt: 0)) \(i.path)\(i.kind == .folder ? "/" : "")\(marks.isEmpty ? "" : "  [" + marks.joined(separator: ", ") + "]")"
    }
}
