import UbiqCore

/// The order a planned round runs in: quick metadata steps first — folders made on the server
/// a depth at a time (together when there are several), the rest parents first — then
/// transfers, then deletions, children first. Pure: the engine says how deep each item is.
struct ExecutionOrder: Equatable {
    /// Folders to create on the server in one request each, shallowest first.
    var folderBatches: [[ItemID]] = []
    /// Other quick steps, parents first.
    var quick: [SyncOp] = []
    /// Uploads and downloads (see `TransferBatches`).
    var transfers: [SyncOp] = []
    /// Deletions, children first.
    var deletes: [SyncOp] = []

    /// Folders of one depth go in one request when there are at least this many.
    static let folderBatchMinimum = 4

    init(_ ops: [SyncOp], depth: (ItemID) -> Int) {
        var folders: [Int: [ItemID]] = [:]
        var quick: [SyncOp] = []
        for op in ops {
            switch op {
            case .upload, .download: transfers.append(op)
            case .deleteLocal, .deleteRemote: deletes.append(op)
            case .createRemoteFolder(let id): folders[depth(id), default: []].append(id); quick.append(op)
            default: quick.append(op)
            }
        }
        folders = folders.filter { $0.value.count >= Self.folderBatchMinimum }
        folderBatches = folders.keys.sorted().map { folders[$0]! }
        let batched = Set(folders.values.joined())
        self.quick = quick.filter { !($0.isRemoteFolderCreation && batched.contains($0.item)) }.sorted { depth($0.item) < depth($1.item) }
        deletes.sort { depth($0.item) > depth($1.item) }
    }
}
