import Foundation
import Testing
import UbiqCore
import UbiqTUI

/// Shared sample data and golden-screen helpers.
enum Fixtures {
    static let t0 = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18 07:46 UTC

    static func id(_ n: Int) -> ItemID { ItemID(uuid: UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))!) }

    static func item(_ n: Int, _ path: String, kind: ItemKind = .file, size: Int = 1234, status: MetadataItem.Status = .current,
                     _ tweak: (inout MetadataItem) -> Void = { _ in }) -> MetadataItem {
        var i = MetadataItem(itemID: id(n), path: try! RelativePath(validating: path), kind: kind, size: size,
                             created: t0, modified: t0.addingTimeInterval(Double(n) * 60), status: status)
        tweak(&i)
        return i
    }

    /// A folder with every status the Files view can show, and wide-character names.
    static let items: [MetadataItem] = [
        item(1, "Documents", kind: .folder, size: 0),
        item(2, "Documents/Reports", kind: .folder, size: 0),
        item(3, "Documents/current.txt"),
        item(4, "Documents/cloud only.pdf", size: 5_000_000, status: .notDownloaded),
        item(5, "Documents/downloading.mov", size: 80_000_000, status: .notDownloaded) { $0.downloading = true; $0.percentDownloaded = 52 },
        item(6, "Documents/uploading.zip", size: 2_000_000) { $0.uploading = true; $0.uploaded = false; $0.percentUploaded = 7 },
        item(7, "Documents/plan.txt") { $0.conflict = true },
        item(8, "Documents/broken.bin") { $0.uploadError = "storage full"; $0.uploaded = false },
        item(9, "Documents/报告-2024年.pdf", size: 42),
        item(10, "Documents/party 🎉.md", size: 7),
        item(11, "Documents/waiting.txt") { $0.uploaded = false },
        item(12, "Documents/Reports/q1.txt"),
    ]

    static var theme: Theme { try! ThemeLoader(searchPaths: []).load("default") }

    static func state(view: ViewID = .files, folder: String? = "Documents") -> AppState {
        var s = AppState()
        s.view = view
        s.files.gather(items)
        if let folder { s.files.open(try! RelativePath(validating: folder)) }
        s.status.account = "alice"; s.status.server = "http://127.0.0.1:8737"; s.status.device = "laptop"; s.status.state = "online"
        s.status.conflicts = 1
        return s
    }

    /// Compares a screen with `Golden/NAME.txt`; `UBIQ_RECORD_GOLDEN=1` writes it instead.
    static func golden(_ name: String, _ screen: ScreenBuffer, sourceLocation: SourceLocation = #_sourceLocation) {
        golden(name, text: screen.lines.joined(separator: "\n") + "\n", sourceLocation: sourceLocation)
    }

    /// Compares any text with `Golden/NAME.txt` (recorded the same way).
    static func golden(_ name: String, text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden/\(name).txt")
        if ProcessInfo.processInfo.environment["UBIQ_RECORD_GOLDEN"] == "1" {
            try? text.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
            Issue.record("no golden file \(url.path) (record with UBIQ_RECORD_GOLDEN=1)", sourceLocation: sourceLocation)
            return
        }
        if expected != text {
            let e = expected.split(separator: "\n", omittingEmptySubsequences: false), t = text.split(separator: "\n", omittingEmptySubsequences: false)
            let first = zip(e, t).enumerated().first { $0.element.0 != $0.element.1 }
            Issue.record("screen differs from \(name).txt at line \(first?.offset ?? -1):\n  expected: \(first?.element.0 ?? "")\n  actual:   \(first?.element.1 ?? "")\n\(text)",
                         sourceLocation: sourceLocation)
        }
    }
}
