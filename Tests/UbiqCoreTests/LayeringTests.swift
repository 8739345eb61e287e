import Foundation
import Testing

/// The pure targets import no I/O frameworks and never read the clock, make UUIDs or random
/// numbers, or touch the file system themselves.
@Suite("Layering")
struct LayeringTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(arguments: ["UbiqCore", "UbiqProtocol"])
    func pureTargetsStayPure(target: String) throws {
        let dir = Self.root.appendingPathComponent("Sources/\(target)")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".swift") }
        #expect(!files.isEmpty)
        let forbidden = ["import NIO", "import Hummingbird", "import GRDB", "import Dispatch", "import CNCurses", "import AsyncHTTPClient",
                         "Date()", "UUID()", ".random(", "FileManager", "DispatchQueue", "UbiqStorage", "UbiqServer", "UbiqEngine"]
        for f in files {
            let text = try String(contentsOf: dir.appendingPathComponent(f), encoding: .utf8)
            for word in forbidden {
                #expect(!text.contains(word), "\(target)/\(f) contains '\(word)'")
            }
        }
    }

    @Test func serverNeverImportsTheClientOrEngine() throws {
        let dir = Self.root.appendingPathComponent("Sources/UbiqServer")
        for f in try FileManager.default.contentsOfDirectory(atPath: dir.path) where f.hasSuffix(".swift") {
            let text = try String(contentsOf: dir.appendingPathComponent(f), encoding: .utf8)
            #expect(!text.contains("import UbiqClient") && !text.contains("import UbiqEngine"), "UbiqServer/\(f)")
        }
    }
}
