import Foundation
import UbiqCore

/// What `ubiq rekey` did in one container (see ``SyncEngine/rekey()``).
public struct RekeyReport: Sendable, Equatable {
    /// The generation of the account's key everything was sealed with.
    public var epoch: Int
    /// Documents sent again as new versions sealed with it.
    public var resealed = 0
    /// Documents whose current version was sealed with it already.
    public var current = 0
    /// Documents this device does not hold (on demand, evicted): another device must re-seal them.
    public var absent = 0
    /// Documents changing here or elsewhere while it ran, or whose new version did not go up
    /// (`ubiq status` says why): running it again takes them.
    public var left = 0
    /// Settings written again, sealed with the newest key.
    public var settings = 0

    public init(epoch: Int) { self.epoch = epoch }
}

extension ItemTrees {
    /// The files `ubiq rekey` hashes again under the newest key: those in step with the server
    /// whose local copy is the merge base's (stamp unchanged). With them, the report so far: the
    /// server's files this device does not hold, and those it holds but that are changing.
    func rekeyJobs(_ files: LocalFiles, epoch: Int) -> (jobs: [(ItemID, String, FileStamp)], report: RekeyReport) {
        var jobs: [(ItemID, String, FileStamp)] = []
        var report = RekeyReport(epoch: epoch)
        for (id, r) in remote.storage where r.node.kind == .file {
            guard let l = local[id], l.entry.kind == .file else { report.absent += 1; continue }
            guard let s = synced[id], s.node.kind == .file, s.node.version == r.node.version, s.stamp == l.entry.stamp else { report.left += 1; continue }
            jobs.append((id, files.path(l.path), l.entry.stamp))
        }
        return (jobs, report)
    }

    /// Takes the hashes of `rekeyJobs`: a file whose hash under the newest key is not its merge
    /// base's is, to the planner, a file edited here (its stamp's hash is the new one), so the
    /// next pass sends it as a new version sealed with that key. Returns the files to be sent
    /// with their new hashes, and counts the rest into `report`.
    func takeRekeyed(_ hashed: [(ItemID, FileStamp, Result<(Manifest, FileStamp, [UInt8]?)?, Error>)], report: inout RekeyReport,
                     note: (Manifest, FileStamp) -> Void) throws -> [ItemID: ContentHash] {
        var sent: [ItemID: ContentHash] = [:]
        for (id, expected, r) in hashed {
            // Changed while it was hashed, or since (a pass ran meanwhile): left to the next run.
            guard case .success(let got?) = r, got.1 == expected, var s = synced[id], s.stamp == expected, local[id]?.entry.stamp == expected else {
                report.left += 1
                continue
            }
            note(got.0, got.1)
            guard got.0.hash != s.node.hash else { report.current += 1; continue }
            s.stampHash = got.0.hash
            try setSynced(id, s)
            localHashes[id] = got.0.hash
            sent[id] = got.0.hash
        }
        return sent
    }

    /// Counts the files `takeRekeyed` sent by what the pass after made of them.
    func countRekeyed(_ sent: [ItemID: ContentHash], into report: inout RekeyReport) {
        for (id, hash) in sent {
            if synced[id]?.node.hash == hash { report.resealed += 1 } else { report.left += 1 }
        }
    }
}
