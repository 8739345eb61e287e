import Foundation
import UbiqClient
import UbiqCore

/// Small files travel in batches: a few requests and two file-system flushes for hundreds of
/// files instead of three requests and an fsync each. Big files keep the one-at-a-time path
/// (metadata first, progress, resumable partial files).
extension Transfers {
    /// Splits a pass's transfers into batches of small files and the rest (run one at a time).
    func splitBatches(_ ops: [SyncOp]) -> (uploads: [[SyncOp]], downloads: [[SyncOp]], single: [SyncOp]) {
        var up: [TransferBatches.Candidate] = [], down: [TransferBatches.Candidate] = [], single: [SyncOp] = []
        for op in ops {
            switch op {
            case .upload(let id, _):
                if let l = local[id], l.entry.kind == .file, l.entry.stamp.size <= TransferBatches.fileLimit {
                    up.append(.init(op: op, size: l.entry.stamp.size, path: l.path.string))
                } else { single.append(op) }
            case .download(let id, _):
                if let r = remote[id], r.node.kind == .file, Int64(r.node.size) <= TransferBatches.fileLimit {
                    down.append(.init(op: op, size: Int64(r.node.size), path: r.node.path.string))
                } else { single.append(op) }
            default: single.append(op)
            }
        }
        return TransferBatches.split(uploads: up, downloads: down, single: single)
    }

    /// Runs batches of small files' transfers, several at a time (one's requests wait on the
    /// network or the disk while another's are built); more files the server announces while
    /// they run join as download batches instead of waiting for the round to end. True if
    /// anything changed.
    nonisolated(nonsending) func runBatches(uploads: [[SyncOp]], downloads: [[SyncOp]], inFlight: Set<ItemID>) async -> Bool {
        var batches = uploads.map { ($0, true) } + downloads.map { ($0, false) }
        var inFlight = inFlight
        var mayExtend = true
        let host = self.host
        return await withTaskGroup(of: Bool.self, returning: Bool.self) { group in
            var progressed = false
            var running = 0
            while true {
                while running < TransferBatches.atOnce, !batches.isEmpty, await host.isOnline() {
                    let (b, up) = batches.removeFirst()
                    group.addTask { await host.runBatch(b, upload: up) }
                    running += 1
                }
                guard running > 0, let r = await group.next() else { break }
                if r { progressed = true }
                running -= 1
                guard mayExtend, batches.isEmpty, let more = await host.announcedDownloads(excluding: inFlight) else { continue }
                if more.isEmpty { mayExtend = false }
                inFlight.formUnion(more.joined().map(\.item))
                batches += more.map { ($0, false) }
            }
            return progressed
        }
    }

    /// Runs big files' transfers, four at a time (each one step of the plan). True if anything changed.
    nonisolated(nonsending) func runSingles(_ ops: [SyncOp]) async -> Bool {
        let host = self.host
        return await withTaskGroup(of: Bool.self, returning: Bool.self) { group in
            var progressed = false
            var running = 0
            for op in ops {
                if running >= 4, let r = await group.next() { progressed = progressed || r; running -= 1 }
                group.addTask { await host.run(op) }
                running += 1
            }
            for await r in group where r { progressed = true }
            return progressed
        }
    }

    /// Runs a batch of operations and records per-item errors as single steps do. True if anything changed.
    nonisolated(nonsending) func runBatch(_ ops: [SyncOp], upload: Bool) async -> Bool {
        guard !ops.isEmpty else { return false }
        do {
            let done = upload ? try await uploadBatch(ops) : try await downloadBatch(ops)
            logger.debug("batch of \(ops.count) \(upload ? "upload" : "download")(s) → \(done) done")
            return done > 0
        } catch {
            if await host.endsWithoutFailure(error) { return false }
            guard ops.count > 1 else {
                let (code, message) = Self.describe(error)
                await host.failed(ops[0].item, code: code, message: message)
                logger.warning("\(ops[0]): \(error)")
                return false
            }
            // The batch as a whole failed (g. one file changed meanwhile): its two halves go as
            // batches of their own, and so on down to the file at fault — a few requests, not one
            // per file (66 files one at a time took minutes on a busy server while a writer kept
            // changing one of them).
            failedBatches += 1
            logger.warning("batch of \(ops.count): \(error); running it in halves")
            let mid = ops.count / 2
            var progressed = false
            for half in [Array(ops[..<mid]), Array(ops[mid...])] where await runBatch(half, upload: upload) { progressed = true }
            return progressed
        }
    }

    /// An error's stable code and message, as items' failures record them.
    static func describe(_ error: any Error) -> (code: String, message: String) {
        let code = (error as? ClientError)?.code.rawValue ?? (error as? EngineError)?.code.rawValue ?? (error as? CoreError)?.code.rawValue
            ?? ErrorCode.internalError.rawValue
        let message = (error as? ClientError)?.message ?? (error as? EngineError)?.message ?? (error as? CoreError)?.message ?? "\(error)"
        return (code, message)
    }
}
