import ArgumentParser
import Foundation
import UbiqCore

/// The pure planner over trees that already agree (what every start-up and every pass with
/// nothing to do pays), and over trees where every file changed on one side.
struct PlannerBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "planner", abstract: "Planner cost over N items in sync, and all changed.")

    @Option(help: "Items (files in 100 folders).") var items = 10_000
    @Option(help: "Repetitions (the median is reported).") var runs = 15

    func run() throws {
        var rng = SplitMix(seed: 11)
        var t = SyncTrees()
        for i in 0..<items {
            let folder = i < 100
            let path = try RelativePath(validating: folder ? "many/d\(i)" : "many/d\(i % 100)/f\(i).bin")
            let id = ItemID(uuid: UUID()), v = VersionID(uuid: UUID())
            let h: ContentHash? = folder ? nil : ContentHash.of((0..<8).map { _ in UInt8.random(in: 0...255, using: &rng) })
            let kind: ItemKind = folder ? .folder : .file
            t.remote[id] = RemoteNode(path: path, kind: kind, version: v, hash: h, size: 4096)
            t.synced[id] = SyncedNode(path: path, kind: kind, version: v, hash: h)
            // The local side as a scan makes it: its own path strings.
            t.local[id] = LocalNode(path: try RelativePath(validating: String(path.string.utf8.map { Character(UnicodeScalar($0)) })), kind: kind, hash: h)
        }
        func measure(_ name: String, _ trees: SyncTrees, expect: (Int) -> Bool) {
            var times: [Double] = []
            var count = 0
            for _ in 0..<runs {
                let t0 = ContinuousClock.now
                count = Planner.plan(trees).count
                times.append(seconds(ContinuousClock.now - t0))
            }
            guard expect(count) else { print("\(name): unexpected plan of \(count) op(s)"); return }
            print(String(format: "%@ %d items: median %.1f ms (%.2f µs/item), %d op(s)", name.padding(toLength: 22, withPad: " ", startingAt: 0),
                         items, median(times) * 1000, median(times) * 1e6 / Double(items), count))
        }
        measure("in sync", t) { $0 == 0 }
        var edited = t
        for (id, l) in t.local where l.kind == .file { edited.local[id]?.hash = ContentHash.of(Array(l.path.string.utf8)) }
        measure("every file edited", edited) { $0 == items - 100 }
    }
}
