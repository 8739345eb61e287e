import UbiqCore

/// The order a planned round runs in: quick metadata steps first — folders made on the server
/// a depth at a time (together when there are several), the rest parents first — then
/// transfers, then deletions, children first. Pure: the engine says how deep each item is.
struct ExecutionOrder: Equatable {
    /// Folders to create on the server in one request each, shallowest first.
    var folderBatches: [[ItemID]] = []
    /// Other quick steps (run `parentsFirst` after the folder batches).
    var quick: [SyncOp] = []
    /// Uploads and downloads (see `TransferBatches`).
    var transfers: [SyncOp] = []
    /// Deletions (run `childrenFirst` after every other step).
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
        self.quick = quick.filter { !($0.isRemoteFolderCreation && batched.contains($0.item)) }
    }

    /// Parents first, by the depths as they are when the steps are about to run (the steps
    /// before them may have moved or adopted items).
    static func parentsFirst(_ ops: [SyncOp], depth: (ItemID) -> Int) -> [SyncOp] { ops.sorted { depth($0.item) < depth($1.item) } }

    /// Children first, likewise (deletes run after every other step of the round).
    static func childrenFirst(_ ops: [SyncOp], depth: (ItemID) -> Int) -> [SyncOp] { ops.sorted { depth($0.item) > depth($1.item) } }
}
