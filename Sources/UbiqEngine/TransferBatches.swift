import UbiqCore

/// How a pass's transfers travel: small files in batches — a few requests and two file-system
/// flushes for hundreds of files instead of three requests and an fsync each — and big files
/// one at a time (metadata first, progress, resumable partial files). A single small file is a
/// batch of one: one pipeline for every small file, whatever else the pass does. Pure: the engine says
/// which transfers are small files, with their sizes and paths.
enum TransferBatches {
    /// Files up to this size may travel in a batch.
    static let fileLimit: Int64 = 1 << 20
    /// Files per batch (one commit request, one manifests request).
    static let files = 500
    /// Content bytes per batch (it is held in memory while it travels).
    static let totalBytes: Int64 = 32 << 20
    /// Batches in flight at once.
    static let atOnce = 3

    /// A small file's transfer.
    struct Candidate {
        let op: SyncOp
        let size: Int64
        let path: String
    }

    /// Groups the small uploads and downloads into batches, neighbours together (a batch then
    /// lands in a few folders, each flushed once per batch: 10,000 files in 100 folders took
    /// 2,000 folder flushes in ID order), each within `files` files and `totalBytes` bytes.
    /// Every operation comes out exactly once.
    static func split(uploads: [Candidate], downloads: [Candidate], single: [SyncOp]) -> (uploads: [[SyncOp]], downloads: [[SyncOp]], single: [SyncOp]) {
        (groups(uploads), groups(downloads), single)
    }

    static func groups(_ xs: [Candidate]) -> [[SyncOp]] {
        var out: [[SyncOp]] = []
        var current: [SyncOp] = [], bytes: Int64 = 0
        for c in xs.sorted(by: { $0.path < $1.path }) {
            if !current.isEmpty && (current.count >= files || bytes + c.size > totalBytes) { out.append(current); current = []; bytes = 0 }
            current.append(c.op)
            bytes += c.size
        }
        if !current.isEmpty { out.append(current) }
        return out
    }
}
