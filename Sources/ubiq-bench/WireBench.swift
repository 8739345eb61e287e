import ArgumentParser
import Foundation
import UbiqCore
import UbiqProtocol

/// JSON coding cost of the requests and responses that carry many files: a change page, a
/// commit batch and its response, a manifests response (all of `--items` entries).
struct WireBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "wire", abstract: "Encode/decode cost of the batch messages, µs per item.")

    @Option(help: "Items per message.") var items = 500
    @Option(help: "Repetitions (the median is reported).") var runs = 9

    func run() throws {
        var rng = SplitMix(seed: 7)
        func hash() -> ContentHash { ContentHash.of((0..<8).map { _ in UInt8.random(in: 0...255, using: &rng) }) }
        let device = DeviceID(uuid: UUID())
        let now = Date()
        var records: [ItemRecord] = [], commits: [CommitRequest] = [], manifests: [Manifest] = []
        for i in 0..<items {
            let size = Int.random(in: 1024...8192, using: &rng)
            let m = Manifest(chunks: [ChunkRef(hash: hash(), size: size)], size: size, hash: hash())
            manifests.append(m)
            let path = try RelativePath(validating: "many/d\(i % 100)/f\(i).bin")
            commits.append(CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path, kind: .file, base: nil,
                                         modified: now, manifest: m))
            let v = VersionRecord(id: VersionID(uuid: UUID()), state: .current, size: size, hash: m.hash, modified: now, committed: now,
                                  device: device, deviceName: "laptop", uploaded: true)
            records.append(ItemRecord(id: ItemID(uuid: UUID()), path: path, kind: .file, current: v, conflictCount: 0, deletedAt: nil,
                                      changeSeq: Int64(i), created: now))
        }
        let page = ChangesResponse(items: records, cursor: Int64(items), hasMore: false)
        let batch = CommitBatchRequest(commits: commits)
        let response = CommitBatchResponse(results: records.map { r in
            CommitBatchResult(response: CommitResponse(outcome: .created, item: r, version: nil, missing: []), error: nil)  // as the server sends it: the current version once
        })
        let ms = ManifestsResponse(manifests: manifests)
        func measure<T: Codable>(_ name: String, _ value: T) throws {
            var enc: [Double] = [], dec: [Double] = []
            var bytes = 0
            for _ in 0..<runs {
                let t0 = ContinuousClock.now
                let data = try WireCoding.encode(value)
                let t1 = ContinuousClock.now
                _ = try WireCoding.decode(T.self, from: data)
                let t2 = ContinuousClock.now
                enc.append(seconds(t1 - t0)); dec.append(seconds(t2 - t1)); bytes = data.count
            }
            print(String(format: "%@ %6d bytes/item   encode %6.1f µs/item   decode %6.1f µs/item",
                         name.padding(toLength: 24, withPad: " ", startingAt: 0), bytes / items, median(enc) * 1e6 / Double(items), median(dec) * 1e6 / Double(items)))
        }
        try measure("change page", page)
        try measure("commit batch request", batch)
        try measure("commit batch response", response)
        try measure("manifests response", ms)
    }
}
