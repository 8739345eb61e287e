import Foundation
import Testing
import UbiqCore
@testable import UbiqTUI
import UbiqTesting

/// Folders show what they hold (#24 §2): a conflict or an error anywhere inside, everything in
/// the cloud, and their total size.
@Suite("Folder summaries")
struct FolderSummaryTests {
    @Test func aFolderRowShowsWhatIsDeepInsideIt() {
        var f = FilesState()
        f.gather([
            Fixtures.item(1, "Documents", kind: .folder, size: 0),
            Fixtures.item(2, "Documents/A", kind: .folder, size: 0),
            Fixtures.item(3, "Documents/A/deep", kind: .folder, size: 0),
            Fixtures.item(4, "Documents/A/deep/x.txt", size: 100) { $0.conflict = true },
            Fixtures.item(5, "Documents/A/y.txt", size: 20) { $0.uploadError = "storage full"; $0.uploaded = false },
            Fixtures.item(6, "Documents/B", kind: .folder, size: 0),
            Fixtures.item(7, "Documents/B/z.pdf", size: 5000, status: .notDownloaded),
            Fixtures.item(8, "Documents/B/w.pdf", size: 3000, status: .notDownloaded),
            Fixtures.item(9, "Documents/C", kind: .folder, size: 0),
            Fixtures.item(10, "Documents/top.txt", size: 7),
        ])
        f.open(try! RelativePath(validating: "Documents"))
        let byName = Dictionary(uniqueKeysWithValues: f.rows.map { ($0.item.name, $0.summary) })
        let a = byName["A"]!!, b = byName["B"]!!, c = byName["C"]!!
        #expect(a.files == 2 && a.bytes == 120 && a.conflicts == 1 && a.errors == 1 && a.status == "status.error")
        #expect(b.files == 2 && b.bytes == 8000 && b.cloudOnly == 2 && b.status == "status.cloud" && b.stateWords == "everything in the cloud only")
        #expect(c.files == 0 && c.status == "status.synced" && c.stateWords == "empty")
        #expect(byName["top.txt"]! == nil, "files have no summary")
        var s = Fixtures.state()
        s.files = f
        let lines = Renderer.render(s, width: 80, height: 24, context: RenderContext(theme: Fixtures.theme, now: Fixtures.t0)).lines
        let rowA = lines.first { $0.contains("▸ A/") } ?? "", rowB = lines.first { $0.contains("▸ B/") } ?? ""
        #expect(rowA.contains("✗⚠") && rowA.contains("120 B"), "\(rowA)")
        #expect(rowB.contains("☁") && rowB.contains("7.8 KiB"), "\(rowB)")
    }

    /// A change that keeps every row in place (a transfer's progress, its end) still moves the
    /// summary of the folder it is in: the demo's top folder kept showing "waiting".
    @Test func aTransferEndingDeepInsideUpdatesTheFolderRow() {
        var f = FilesState()
        var file = Fixtures.item(3, "Documents/A/deep/x.txt", size: 10) { $0.uploading = true; $0.uploaded = false }
        f.gather([Fixtures.item(1, "Documents", kind: .folder, size: 0), Fixtures.item(2, "Documents/A", kind: .folder, size: 0),
                  Fixtures.item(4, "Documents/A/deep", kind: .folder, size: 0), file])
        f.open(try! RelativePath(validating: "Documents"))
        #expect(f.rows.first?.summary?.status == "status.downloading")
        file.uploading = false; file.uploaded = true
        f.apply(QueryDiff(changed: [file]))
        #expect(f.rows.first?.summary?.status == "status.synced" && f.rows.first?.summary?.transferring == 0, "\(String(describing: f.rows.first?.summary))")
        file.size = 30
        f.apply(QueryDiff(changed: [file]))
        #expect(f.rows.first?.summary?.bytes == 30)
    }

    @Test func summariesCountEveryFileOnceUnderItsShownFolder() {
        var rng = SeededRandom.forTest("folder.summary")
        for round in 0..<100 {
            var items = [Fixtures.item(1, "Documents", kind: .folder, size: 0)]
            var n = 2
            var folders = ["Documents"]
            for _ in 0..<Int.random(in: 0...6, using: &rng) {
                let f = folders.randomElement(using: &rng)! + "/d\(n)"
                items.append(Fixtures.item(n, f, kind: .folder, size: 0)); folders.append(f); n += 1
            }
            for _ in 0..<Int.random(in: 0...20, using: &rng) {
                items.append(Fixtures.item(n, folders.randomElement(using: &rng)! + "/f\(n).txt", size: Int.random(in: 0...999, using: &rng))); n += 1
            }
            var f = FilesState()
            f.gather(items)
            let shown = folders.randomElement(using: &rng)!
            f.open(try! RelativePath(validating: shown))
            for row in f.rows where row.item.kind == .folder {
                let under = items.filter { $0.kind == .file && $0.path.string.hasPrefix(row.item.path.string + "/") }
                #expect(row.summary?.files == under.count && row.summary?.bytes == under.reduce(0) { $0 + Int64($1.size) },
                        "seed \(rng.seed) round \(round): \(row.item.path)")
            }
        }
    }
}
