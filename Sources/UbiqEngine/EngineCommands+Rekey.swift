import Foundation
import UbiqCore

extension EngineCommands {
    /// `ubiq rekey` in this container: the engine is brought in step, every document in step
    /// here is hashed again under the account's newest key (`keys`), and those whose current
    /// version was sealed with an older one go up as new versions sealed with it — the
    /// content is the same, so every other device places it from its own copy's chunks. What
    /// changes meanwhile, here or elsewhere, is left for another run (counted in the report).
    nonisolated(nonsending) func rekey(_ keys: SharedKeyring?) async throws -> RekeyReport {
        guard let keys else { throw EngineError(.invalidRequest, "this account is not encrypted end to end: there is nothing to seal again (ubiq encrypt)") }
        await host.syncNow()
        let (jobs, found) = trees.rekeyJobs(files, epoch: keys.keys.current.epoch)
        var report = found
        let chunker = files.chunker
        let hashed = jobs.isEmpty ? [] : await Task.detached(priority: .utility) { LocalFiles.hashAll(jobs, chunker: chunker) }.value
        let sent = try trees.takeRekeyed(hashed, report: &report) { transfers.contents.note($0, for: $1) }
        if !sent.isEmpty { await host.syncNow() }
        trees.countRekeyed(sent, into: &report)
        return report
    }
}
