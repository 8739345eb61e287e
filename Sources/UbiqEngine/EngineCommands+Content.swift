import Foundation
import UbiqCore
import UbiqDaemonProtocol

/// The user's commands about items' content on this device: fetch (`f`, `ubiq download`),
/// evict (`E`, `ubiq evict`), pin (`p`, `ubiq pin`), cancel downloads (`X`), hold, retry now
/// (`u`, `ubiq retry`). What the pass must do follows from the wishes recorded (`DownloadWishes`).
extension EngineCommands {
    /// Fetches the content of the items at (or under) the paths and waits for it.
    nonisolated(nonsending) func download(_ paths: [RelativePath]) async -> [PathResult] {
        await host.scanLocal()
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
        await host.syncNow()
        let lastError = await host.lastFailure()
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

    /// Tries the failing items at (or under) the paths again now (all when `paths` is empty);
    /// returns how many were waiting (the caller asks for a pass).
    func retry(_ paths: [RelativePath]) -> Int {
        outcomes.retryNow(paths.isEmpty ? nil : paths.flatMap { items(under: $0) }, now: .now)
    }

    /// Drops the local content of the items at (or under) the paths. Refused for content not yet on the server.
    nonisolated(nonsending) func evict(_ paths: [RelativePath]) async -> [PathResult] {
        await host.scanLocal()
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
                do { try await host.evictLocal(id) } catch { failure = "\(error)" }
            }
            let cloudOnly = ids.filter { local[$0] == nil && remote[$0] != nil && !wishes.evicted.contains($0) }
            if !cloudOnly.isEmpty { try? wishes.evict(cloudOnly) }
            results.append(PathResult(path: p.string, error: failure))
        }
        await host.requestPass(after: nil)
        return results
    }

    /// Pins (or unpins) the items at the paths (see ``SyncEngine/pin(_:_:)``); true when a pass is due.
    func pin(_ paths: [RelativePath], _ on: Bool) -> (results: [PathResult], passDue: Bool) {
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
        guard !ids.isEmpty else { return (results, false) }
        do {
            try wishes.setPinned(ids, on)
        } catch {
            return (paths.map { PathResult(path: $0.string, error: "\(error)") }, false)
        }
        // Listings show the flag on each item and on everything in a pinned folder.
        for id in ids {
            trees.changeLog.note(id)
            if let p = trees.path(of: id) { for k in items(under: p) { trees.changeLog.note(k) } }
        }
        return (results, on)
    }

    /// Cancels the downloads of the items at (or under) the paths (see ``SyncEngine/cancelTransfers(_:)``).
    func cancelTransfers(_ paths: [RelativePath], planned: Set<ItemID>) -> [PathResult] {
        var results: [PathResult] = []
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
            for id in downloads { trees.changeLog.note(id) }
            let updates = downloads.count - cloudOnly.count
            results.append(PathResult(path: p.string, error: updates == 0 ? nil
                : "\(updates) of them update a file that is here: they are fetched again by the next pass (E evicts the file instead)"))
        }
        return results
    }

    /// Holds (or lets go) the transfers of the files at or under the paths (see ``SyncEngine/hold(_:_:)``).
    func hold(_ paths: [RelativePath], _ on: Bool) -> [PathResult] {
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
            for id in ids { trees.changeLog.note(id) }
            results.append(PathResult(path: p.string))
        }
        return results
    }
}
