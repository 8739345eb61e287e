import Foundation
import UbiqCore
import UbiqEngine
import UbiqTUI
#if canImport(Glibc)
import Glibc
#endif

/// `ubiq resolve PATH --merge`: the engine merges the conflict version into the current one
/// line by line; the result goes to a file opened in `$VISUAL`/`$EDITOR`; what the editor
/// leaves, without conflict markers, is kept as the document's current version. A merge that
/// still holds markers, or an editor that fails, keeps nothing (the file is left for the user).
struct MergeCommandFlow {
    let path: String
    let version: String?
    let edit: Bool
    let home: HomeOption

    func run() async throws {
        let r = try await DeviceSession.require(home, .mergeDraft(path: path, version: version))
        guard let draft = r.merge else { throw CLIError(.internalError, "the engine sent no merge") }
        var text = draft.text
        let hunks = draft.conflicts == 1 ? "1 conflicting hunk" : "\(draft.conflicts) conflicting hunks"
        if edit {
            let file = try Self.draftFile(for: draft)
            guard ExternalProgram.edit(file.path) == 0 else {
                throw CLIError(.invalidRequest, "the editor failed; nothing kept (the merge is in \(file.path))")
            }
            guard let edited = try? String(contentsOf: file, encoding: .utf8) else {
                throw CLIError(.invalidRequest, "\(file.path) is no longer UTF-8 text; nothing kept")
            }
            guard !ThreeWayMerge.hasMarkers(edited) else {
                throw CLIError(.invalidRequest, "conflict markers remain in \(file.path); nothing kept — edit them away and run this again, or pick a version with --keep")
            }
            text = edited
            try? FileManager.default.removeItem(at: file)
        } else if draft.conflicts > 0 {
            throw CLIError(.invalidRequest, "\(path): \(hunks) both sides changed differently; run without --no-edit to settle them in your editor")
        }
        let kept = try await DeviceSession.require(home, .keepMerge(draft: draft, text: text))
        let left = kept.item?.conflictCount ?? 0
        print("merged \(draft.path) (\(draft.conflicts == 0 ? "no conflicting hunks" : "\(hunks) settled in the editor"))\(left > 0 ? "; \(left) conflict(s) remain" : "")")
    }

    /// A private file holding the merge, named after the document (its extension kept, so
    /// editors know the language).
    static func draftFile(for draft: MergeDraft) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ubiq-merge-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let file = dir.appendingPathComponent("MERGE-" + draft.path.name)
        try Data(draft.text.utf8).write(to: file, options: .withoutOverwriting)
        return file
    }
}
