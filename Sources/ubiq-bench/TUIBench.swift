import ArgumentParser
import Foundation
import UbiqCore
import UbiqTUI

/// The front end with many items: time to render a frame of the Files view, to apply a batch
/// of updates, and to gather a query result (reducer + sort), and the memory they take.
struct TUIBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tui", abstract: "Files view frame time and memory with N items.")
    @Option(help: "Number of items.") var items = 100_000
    @Option(help: "Frames to render.") var frames = 300

    func run() async throws {
        let theme = try ThemeLoader(searchPaths: []).load("default")
        let before = rssMiB()
        let now = Date()
        var all: [MetadataItem] = []
        all.reserveCapacity(items)
        for i in 0..<items {
            let path = try RelativePath(validating: "Documents/d\(i % 100)/file \(i) 报告.txt")
            var m = MetadataItem(itemID: ItemID(uuid: UUID()), path: path, kind: .file, size: i * 37 % 1_000_000, modified: now, status: i % 7 == 0 ? .notDownloaded : .current)
            if i % 97 == 0 { m.downloading = true; m.percentDownloaded = Double(i % 100) }
            m.conflict = i % 1000 == 0
            all.append(m)
        }
        for d in 0..<100 { all.append(MetadataItem(itemID: ItemID(uuid: UUID()), path: try RelativePath(validating: "Documents/d\(d)"), kind: .folder, size: 0, modified: now, status: .current)) }
        all.append(MetadataItem(itemID: ItemID(uuid: UUID()), path: try RelativePath(validating: "Documents"), kind: .folder, size: 0, modified: now, status: .current))
        let madeItems = rssMiB()

        let clock = ContinuousClock()
        var results = QueryResults(MetadataQueryDefinition())
        var gathered: [MetadataItem] = []
        let tGather = clock.measure {
            _ = results.reduce(all, now: now)
            gathered = results.ordered
        }
        var snapshot = all
        for i in stride(from: 0, to: 500, by: 1) { snapshot[i].percentDownloaded = 42 }
        var batchDiff = QueryDiff()
        let tReduce = clock.measure { batchDiff = results.reduce(snapshot, now: now) }
        var state = AppState()
        let tState = clock.measure { state.files.gather(gathered) }
        state.files.setFlat(true)
        let ctx = RenderContext(theme: theme, now: now)
        var times: [Double] = []
        for f in 0..<frames {
            state.files.cursor.move(f % 2 == 0 ? 997 : -3, count: state.files.rows.count)
            let t = clock.measure { _ = Renderer.render(state, width: 120, height: 40, context: ctx) }
            times.append(seconds(t) * 1000)
        }
        times.sort()
        // One batch of 500 changed items (a transfer's progress, say) applied to the view state.
        var batch = QueryDiff()
        batch.changed = all.prefix(500).map { var m = $0; m.percentDownloaded = 50; m.downloading = true; return m }
        let tBatch = clock.measure { state.files.apply(batch) }
        print(String(format: "query gathering (reducer + sort) over %d items: %.0f ms", all.count, seconds(tGather) * 1000))
        print(String(format: "one live-query batch over %d items (reduce a fresh snapshot, %d changed): %.0f ms", all.count, batchDiff.changed.count, seconds(tReduce) * 1000))
        print(String(format: "Files view state from %d items: %.0f ms; one batch of 500 changes applied: %.0f ms", all.count, seconds(tState) * 1000, seconds(tBatch) * 1000))
        print(String(format: "Files view frame (120×40, flat list of %d rows): median %.2f ms, p95 %.2f ms, max %.2f ms (n=%d)", state.files.rows.count,
                     median(times), times[Int(Double(times.count - 1) * 0.95)], times.last ?? 0, frames))
        print(String(format: "memory: %.0f MiB for the %d items, %.0f MiB with the query results and view state (process RSS %.0f MiB)",
                     madeItems - before, all.count, rssMiB() - before, rssMiB()))
    }
}
