import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine

/// The name a kept-both conflict version gets beside its document.
@Suite("Keep-both names")
struct KeepBothNameTests {
    let when = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18 11:06:40 UTC
    let utc = TimeZone(identifier: "UTC")!
    func name(_ p: String, _ device: String = "phone", attempt: Int = 1) -> String {
        KeepBoth.name(for: try! RelativePath(validating: p), device: device, modified: when, attempt: attempt, timeZone: utc)
    }

    @Test func theTagGoesBeforeTheExtensionAndNamesTheDeviceAndTime() {
        #expect(name("Documents/plan.txt") == "plan (conflict from phone 2026-11-18 11.06).txt")
        #expect(name("Documents/plan.txt", attempt: 2) == "plan (conflict from phone 2026-11-18 11.06 2).txt")
        #expect(name(".bashrc") == ".bashrc (conflict from phone 2026-11-18 11.06)", "a dotfile has no extension")
        #expect(name("notes") == "notes (conflict from phone 2026-11-18 11.06)")
        #expect(name("a.tar.gz") == "a.tar (conflict from phone 2026-11-18 11.06).gz")
    }

    @Test func hostileDeviceNamesAndLongNamesStayValid() throws {
        let odd = name("x.txt", "lap/top\u{1}\u{7F}")
        #expect(odd == "x (conflict from lap-top-- 2026-11-18 11.06).txt")
        let long = name(String(repeating: "é", count: 120) + ".txt", String(repeating: "d", count: 80))
        #expect(long.utf8.count <= 255 && long.hasSuffix(").txt"), "\(long.utf8.count)")
        _ = try RelativePath(validating: "Documents/" + long)
        _ = try RelativePath(validating: odd)
    }
}
