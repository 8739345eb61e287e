import Foundation
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
import UbiqTUI
#if canImport(Glibc)
import Glibc
#endif

/// `ubiq resolve PATH --merge [--conflict VERSION_ID]`: the engine merges the conflict version into the current one
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
            let file = try draft.writeDraftFile()
            switch MergeDraft.edited(file, editorStatus: ExternalProgram.edit(file.path)) {
            case .success(let t): text = t
            case .failure(let e): throw CLIError(.invalidRequest, e.message)
            }
        } else if draft.conflicts > 0 {
            throw CLIError(.invalidRequest, "\(path): \(hunks) both sides changed differently; run without --no-edit to settle them in your editor")
        }
        let kept = try await DeviceSession.require(home, .keepMerge(draft: draft, text: text))
        let left = kept.item?.conflictCount ?? 0
        print("merged \(draft.path) (\(draft.conflicts == 0 ? "no conflicting hunks" : "\(hunks) settled in the editor"))\(left > 0 ? "; \(left) conflict(s) remain" : "")")
    }
}
