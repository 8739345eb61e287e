import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqProtocol
import UbiqTesting

/// The pure halves of the transfer pipelines: how chunks are cut into framed requests and how
/// a pass's small files are grouped into batches. Seeded properties; the seed is printed.
@Suite("Transfer planning")
struct TransferPlanningTests {
    @Test func framedRequestsKeepEveryChunkInOrderWithinBothLimits() {
        var rng = SeededRandom.forTest("transfer.framed")
        for _ in 0..<300 {
            let limit = Int.random(in: 1...5_000, using: &rng)
            let count = Int.random(in: 0...(rng.next() % 8 == 0 ? 9_000 : 60), using: &rng)
            let sizes = (0..<count).map { _ in Int.random(in: 0...(limit * 3 / 2), using: &rng) }
            let items = Array(sizes.enumerated())
            let groups = ChunkTransport.framed(items, limit: limit) { $0.element }
            #expect(groups.flatMap { $0 }.map(\.offset) == Array(0..<count), "every chunk once, in order")
            #expect(groups.allSatisfy { !$0.isEmpty })
            for (i, g) in groups.enumerated() {
                let bytes = g.reduce(0) { $0 + $1.element }
                #expect(g.count <= WireLimits.maxChunksPerBatch)
                #expect(bytes <= limit || g.count == 1, "a request over the limit holds one chunk alone")
                // Greedy: the next request's first chunk did not fit in this one.
                if i + 1 < groups.count, g.count < WireLimits.maxChunksPerBatch {
                    #expect(bytes + groups[i + 1][0].element > limit, "seed \(rng.seed)")
                }
            }
        }
    }

    @Test func smallFilesAreBatchedByPathWithinTheLimitsAndNoneIsLostOrDoubled() {
        var rng = SeededRandom.forTest("transfer.batches")
        func candidates(_ n: Int, upload: Bool) -> [TransferBatches.Candidate] {
            (0..<n).map { _ in
                let id = ItemID(uuid: UUID())
                let op: SyncOp = upload ? .upload(id, base: nil) : .download(id, version: VersionID(uuid: UUID()))
                let size = rng.next() % 4 == 0 ? TransferBatches.fileLimit : Int64.random(in: 0...70_000, using: &rng)
                return .init(op: op, size: size, path: "d\(Int.random(in: 0...9, using: &rng))/f\(rng.next() % 1_000)")
            }
        }
        for _ in 0..<60 {
            let up = candidates(Int.random(in: 0...(rng.next() % 3 == 0 ? 1_400 : 8), using: &rng), upload: true)
            let down = candidates(Int.random(in: 0...(rng.next() % 3 == 0 ? 1_400 : 8), using: &rng), upload: false)
            let other: [SyncOp] = (0..<Int.random(in: 0...5, using: &rng)).map { _ in .deleteRemote(ItemID(uuid: UUID())) }
            let (ups, downs, single) = TransferBatches.split(uploads: up, downloads: down, single: other)
            let all = ups.flatMap { $0 } + downs.flatMap { $0 } + single
            #expect(all.count == up.count + down.count + other.count && Set(all) == Set(up.map(\.op) + down.map(\.op) + other), "seed \(rng.seed)")
            #expect(ups.isEmpty == up.isEmpty && downs.isEmpty == down.isEmpty, "a single small file is a batch of one")
            #expect(single == other, "only what is not a small file's transfer goes alone")
            for (batches, from) in [(ups, up), (downs, down)] {
                let info = Dictionary(uniqueKeysWithValues: from.map { ($0.op, $0) })
                let paths = batches.flatMap { $0 }.map { info[$0]!.path }
                #expect(paths == paths.sorted(), "neighbours travel together")
                for (i, b) in batches.enumerated() {
                    let bytes = b.reduce(Int64(0)) { $0 + info[$1]!.size }
                    #expect(!b.isEmpty && b.count <= TransferBatches.files && bytes <= TransferBatches.totalBytes)
                    if i + 1 < batches.count, b.count < TransferBatches.files {
                        #expect(bytes + info[batches[i + 1][0]]!.size > TransferBatches.totalBytes, "a batch closes only when full")
                    }
                }
            }
        }
    }

    /// Every downloaded chunk list is checked against the hash the server listed for its
    /// version (batches did not check it): a server that mixes up versions places nothing.
    @Test func aChunkListIsCheckedAgainstItsVersionsHash() throws {
        let a = Manifest.of(Array(repeating: 1, count: 100_000)), b = Manifest.of(Array(repeating: 2, count: 100_000))
        func wanted(_ hash: ContentHash?) -> DownloadPipeline.Wanted {
            let node = RemoteNode(path: try! RelativePath(validating: "Documents/a.bin"), kind: .file, version: VersionID(uuid: UUID()), hash: hash, size: 100_000, uploaded: true)
            return .init(id: ItemID(uuid: UUID()), version: node.version!, target: node.path, expected: nil,
                         remote: RemoteEntry(node: node, conflictCount: 0, modified: nil, deviceName: nil, created: nil, permissions: nil))
        }
        try DownloadPipeline.check(a, wanted(a.hash))
        try DownloadPipeline.check(a, wanted(nil))
        #expect(throws: EngineError.self) { try DownloadPipeline.check(b, wanted(a.hash)) }
        let torn = Manifest(chunks: Array(a.chunks.dropLast()), size: a.size, hash: a.hash)
        #expect(throws: EngineError.self) { try DownloadPipeline.check(torn, wanted(a.hash)) }
    }

}

@Suite("Execution order")
struct ExecutionOrderTests {
    @Test func parentsFirstTransfersThenDeletionsChildrenFirstAndNothingLostOrDoubled() {
        var rng = SeededRandom.forTest("execution.order")
        for _ in 0..<200 {
            var depths: [ItemID: Int] = [:]
            let ops: [SyncOp] = (0..<Int.random(in: 0...40, using: &rng)).map { _ in
                let id = ItemID(uuid: UUID())
                depths[id] = Int.random(in: 1...4, using: &rng)
                switch Int.random(in: 0...6, using: &rng) {
                case 0, 1: return .createRemoteFolder(id)
                case 2: return .upload(id, base: nil)
                case 3: return .download(id, version: VersionID(uuid: UUID()))
                case 4: return .deleteLocal(id)
                case 5: return .deleteRemote(id)
                default: return .createLocalFolder(id)
                }
            }
            let depth = { (id: ItemID) in depths[id]! }
            let o = ExecutionOrder(ops, depth: depth)
            let out = o.folderBatches.joined().map { SyncOp.createRemoteFolder($0) } + o.quick + o.transfers + o.deletes
            #expect(out.count == ops.count && Set(out) == Set(ops), "seed \(rng.seed)")
            let quick = ExecutionOrder.parentsFirst(o.quick, depth: depth), deletes = ExecutionOrder.childrenFirst(o.deletes, depth: depth)
            #expect(quick.map { depth($0.item) } == quick.map { depth($0.item) }.sorted(), "parents first")
            #expect(deletes.map { depth($0.item) } == deletes.map { depth($0.item) }.sorted(by: >), "children first")
            #expect(o.transfers.allSatisfy { if case .upload = $0 { true } else if case .download = $0 { true } else { false } })
            let batchDepths = o.folderBatches.map { Set($0.map(depth)) }
            #expect(batchDepths.allSatisfy { $0.count == 1 } && o.folderBatches.allSatisfy { $0.count >= ExecutionOrder.folderBatchMinimum })
            #expect(batchDepths.map { $0.first! } == batchDepths.map { $0.first! }.sorted())
            // A depth with enough new folders goes whole in its batch, none of them one by one.
            let batchedDepths = Set(batchDepths.compactMap(\.first))
            #expect(!o.quick.contains { $0.isRemoteFolderCreation && batchedDepths.contains(depth($0.item)) })
        }
    }
}
