import Foundation
import UbiqCore
import UbiqDaemonProtocol


/// The user's commands about items' content on this device: fetch (`f`, `ubiq download`),
/// evict (`E`, `ubiq evict`), pin (`p`, `ubiq pin`), cancel downloads (`X`), retry now (`u`,
/// `ubiq retry`). Each checks and acts on the engine's state with no suspension in
/// between; the folder changes through `LocalSteps`, and
/// what the pass must do follows from the wishes recorded (`DownloadWishes`).
extension SyncEngine {
    /// Fetches the content of the items at (or under) the paths and waits for it.
    public func download(_ paths: [RelativePath]) async -> [PathResult] {
        await scanLocal()
        var results: [PathResult] = []
        var targets: [(RelativePath, ItemID)] = []
        for p in paths {
            let ids = items(under: p).filter { remote[$0]?.node.kind == .file }
            if ids.isEmpty && itemID(at: p) == nil { results.append(PathResult(path: p.string, error: "no item at \(p)")); continue }
            targets += ids.map { (p, $0) }
        }
        do {
            try wishes.want(targets.map(\.1), pin: config.download == .onDemand)
        } catch {
            return paths.map { PathResult(path: $0.string, error: "\(error)") }
        }
        await syncNow()
        for p in Set(targets.map(\.0)).sorted() {
            let failed = targets.filter { $0.0 == p && local[$0.1] == nil }.map(\.1)
            if let f = failed.first {
                let why = outcomes.errors[f]
                    ?? (remote[f]?.node.uploaded == false ? "its content has not finished uploading from the device that wrote it" : lastError ?? "not downloaded")
                results.append(PathResult(path: p.string, error: "\(remote[f]?.node.path.string ?? p.string): \(why)"))
            } else {
                results.append(PathResult(path: p.string))
            }
        }
        return results
    }

    /// Tries the failing items at (or under) the paths again now instead of after their retry
    /// delay (all failing items when `paths` is empty); returns how many were waiting.
    public func retry(_ paths: [RelativePath]) -> Int {
        let ids = paths.isEmpty ? nil : paths.flatMap { items(under: $0) }
        let n = outcomes.retryNow(ids, now: .now)
        if n > 0 { requestPass() }
        return n
    }

    /// Drops the local content of the items at (or under) the paths; they stay listed as
    /// `notDownloaded` and absent from the folder. Refused for content not yet on the server.
    public func evict(_ paths: [RelativePath]) async -> [PathResult] {
        await scanLocal()
        var results: [PathResult] = []
        for p in paths {
            let ids = items(under: p).filter { (local[$0]?.entry.kind ?? remote[$0]?.node.kind) == .file }
            if ids.isEmpty && itemID(at: p) == nil { results.append(PathResult(path: p.string, error: "no item at \(p)")); continue }
            if let bad = ids.first(where: { hasUnsyncedContent($0) }) {
                let bp = local[bad]?.path ?? p
                results.append(PathResult(path: p.string, error: "\(bp) has changes not uploaded yet; it cannot be evicted until they are (run 'ubiq sync')"))
                continue
            }
            var failure: String?
            for id in ids where local[id] != nil {
                do {
                    // The eviction is recorded (and the merge base forgotten) before the unlink.
                    try apply(steps.evict(id) {
                        try wishes.evict([id], dropSynced: true)
                        synced[id] = nil
                    })
                } catch { failure = "\(error)" }
            }
            let cloudOnly = ids.filter { local[$0] == nil && remote[$0] != nil && !evicted.contains($0) }
            if !cloudOnly.isEmpty { try? wishes.evict(cloudOnly) }
            results.append(PathResult(path: p.string, error: failure))
        }
        requestPass()
        return results
    }

    /// Pins (or unpins) the items at the paths: a pinned item is kept on this device — on an
    /// on-demand device its content is fetched now and each new version as it comes; a pinned
    /// folder keeps everything in it, files added later too. Unpinning leaves the content as it
    /// is (`evict` drops it).
    public func pin(_ paths: [RelativePath], _ on: Bool) async -> [PathResult] {
        var results: [PathResult] = []
        var ids: [ItemID] = []
        for p in paths {
            guard let id = itemID(at: p) else { results.append(PathResult(path: p.string, error: "no item at \(p)")); continue }
            if on, trees.path(of: id)?.isExcluded == true {
                results.append(PathResult(path: p.string, error: "\(p) is excluded (.nosync): it stays on this device anyway"))
                continue
            }
            ids.append(id)
            results.append(PathResult(path: p.string))
        }
        guard !ids.isEmpty else { return results }
        do {
            try wishes.setPinned(ids, on)
        } catch {
            return paths.map { PathResult(path: $0.string, error: "\(error)") }
        }
        // Listings show the flag on each item and on everything in a pinned folder.
        for id in ids {
            changeLog.note(id)
            if let p = trees.path(of: id) { for k in items(under: p) { changeLog.note(k) } }
        }
        if on { requestPass() }
        return results
    }

    /// Cancels the downloads of the items at (or under) the paths (`X` in the front end): one
    /// running stops at its next window (what arrived is kept in its partial file, so a later
    /// fetch resumes), and an item not on this device stays in the cloud until fetched (`f`,
    /// `ubiq download`). An upload cannot be cancelled alone — the device would no longer agree
    /// with its folder; pausing (`P`, `ubiq pause`) stops every transfer.
    public func cancelTransfers(_ paths: [RelativePath]) -> [PathResult] {
        var results: [PathResult] = []
        let planned = Set(pendingOps.compactMap { op -> ItemID? in if case .download(let id, _) = op { return id } else { return nil } })
        for p in paths {
            let ids = items(under: p)
            let downloads = ids.filter { transfers.running[$0]?.direction == .down || planned.contains($0) }
            let uploads = ids.filter { transfers.running[$0]?.direction == .up }
            if downloads.isEmpty {
                results.append(PathResult(path: p.string, error: uploads.isEmpty ? "nothing is being transferred at \(p)"
                    : "\(p) is uploading: an upload cannot be cancelled alone (P pauses all syncing)"))
                continue
            }
            transfers.cancelled.formUnion(downloads)
            let cloudOnly = downloads.filter { local[$0] == nil }
            do { if !cloudOnly.isEmpty { try wishes.evict(cloudOnly) } } catch {
                results.append(PathResult(path: p.string, error: "\(error)"))
                continue
            }
            for id in downloads { changeLog.note(id) }
            let updates = downloads.count - cloudOnly.count
            results.append(PathResult(path: p.string, error: updates == 0 ? nil
                : "\(updates) of them update a file that is here: they are fetched again by the next pass (E evicts the file instead)"))
        }
        return results
    }

    /// Holds (or lets go) the transfers of the files at or under the paths: their uploads and
    /// downloads wait until resumed, everything else syncs; a download under way stops at its
    /// next window (what arrived is kept). In memory, like `setPaused`: a restart syncs them.
    public func hold(_ paths: [RelativePath], _ on: Bool) -> [PathResult] {
        var results: [PathResult] = []
        for p in paths {
            let ids = items(under: p).filter { (local[$0]?.entry.kind ?? remote[$0]?.node.kind) == .file }
            guard !ids.isEmpty else {
                results.append(PathResult(path: p.string, error: itemID(at: p) == nil ? "no item at \(p)" : "no file at or under \(p)"))
                continue
            }
            if on {
                transfers.held.formUnion(ids)
                transfers.cancelled.formUnion(ids.filter { transfers.running[$0]?.direction == .down })
            } else {
                transfers.held.subtract(ids)
            }
            for id in ids { changeLog.note(id) }
            results.append(PathResult(path: p.string))
        }
        if !on { requestPass() }
        return results
    }
}
