import Foundation
import Testing

/// The module layering, checked on every source file of every target (folders walked whole):
/// each target imports only the project modules its row allows, and the pure targets import
/// no I/O framework and never read the clock, make UUIDs or random numbers, or touch the file
/// system themselves. (It did not recurse, missing `UbiqCore/Query/`, and checked 3 of 13
/// targets: #38 §4.)
@Suite("Layering")
struct LayeringTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The project's own modules.
    static let ours: Set<String> = ["UbiqCore", "UbiqProtocol", "UbiqTransport", "UbiqStorage", "UbiqServer", "UbiqClient", "UbiqEngine", "UbiqDaemonProtocol",
                                    "UbiqTUI", "UbiqCLI", "Ubiquity", "UbiqTesting", "UbiqHarness", "CFileSupport", "CNCursesW", "CTuiSupport"]

    /// What each target may import of ours. Core and Protocol are pure; Storage sits below the
    /// server, the client below the engine; the server never imports the client or the engine;
    /// nothing imports the CLI but the executable. Rows marked "#38 §2" are what the issue is to
    /// take away (the library and the front end on the engine, the bench on the test helpers) —
    /// listed so nothing new creeps in meanwhile.
    static let allowed: [String: Set<String>] = [
        "UbiqCore": [],
        "UbiqProtocol": ["UbiqCore"],
        "UbiqTransport": ["UbiqCore", "CFileSupport"],
        "UbiqStorage": ["UbiqCore", "CFileSupport"],
        "UbiqServer": ["UbiqCore", "UbiqProtocol", "UbiqStorage", "UbiqTransport"],
        "UbiqClient": ["UbiqCore", "UbiqProtocol", "UbiqTransport"],
        "UbiqDaemonProtocol": ["UbiqCore", "UbiqProtocol", "UbiqTransport"],
        "UbiqEngine": ["UbiqCore", "UbiqProtocol", "UbiqDaemonProtocol", "UbiqClient", "UbiqTransport", "CFileSupport"],
        "Ubiquity": ["UbiqCore", "UbiqProtocol", "UbiqDaemonProtocol", "CFileSupport"],
        "UbiqTUI": ["UbiqCore", "UbiqProtocol", "UbiqDaemonProtocol", "Ubiquity", "CNCursesW", "CTuiSupport", "CFileSupport", "UbiqEngine"],
        "UbiqCLI": ["UbiqCore", "UbiqProtocol", "UbiqDaemonProtocol", "UbiqStorage", "UbiqServer", "UbiqClient", "UbiqEngine", "UbiqTUI", "Ubiquity"],
        "ubiq": ["UbiqCLI"],
        "ubiq-notes": ["Ubiquity"],
        "UbiqHarness": ["UbiqCore", "UbiqProtocol", "UbiqDaemonProtocol", "UbiqStorage", "UbiqServer", "UbiqClient", "UbiqEngine", "CFileSupport"],
        "ubiq-bench": ["UbiqCore", "UbiqProtocol", "UbiqDaemonProtocol", "UbiqStorage", "UbiqServer", "UbiqClient", "UbiqEngine", "UbiqTUI", "Ubiquity",
                       "UbiqHarness"],
    ]

    /// Every Swift file under `Sources/<target>`, folders included.
    static func files(_ target: String) throws -> [URL] {
        let dir = root.appendingPathComponent("Sources/\(target)")
        guard let walk = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: nil) else { return [] }
        return walk.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
    }

    /// The modules a file imports (`@testable`, `@_spi(…)` and kinds like `import struct` included).
    static func imports(_ text: String) -> Set<String> {
        var out: Set<String> = []
        for line in text.split(separator: "\n") {
            var words = line.split(separator: " ").map(String.init)
            while let w = words.first, w.hasPrefix("@") { words.removeFirst() }
            guard words.first == "import", words.count >= 2 else { continue }
            let name = words.count >= 3 && ["struct", "class", "enum", "protocol", "func", "var", "let", "typealias"].contains(words[1]) ? words[2] : words[1]
            out.insert(String(name.split(separator: ".").first ?? ""))
        }
        return out
    }

    @Test func everyTargetIsInTheTable() throws {
        let targets = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources").path)
            .filter { !$0.hasPrefix(".") && !["CFileSupport", "CNCursesW", "CTuiSupport"].contains($0) }
        #expect(Set(targets) == Set(Self.allowed.keys), "a target without a row: \(Set(targets).symmetricDifference(Self.allowed.keys))")
    }

    @Test func everyFileImportsOnlyWhatItsTargetMay() throws {
        var checked = 0
        for (target, may) in Self.allowed {
            let files = try Self.files(target)
            #expect(!files.isEmpty, "\(target) has no sources")
            for f in files {
                let used = Self.imports(try String(contentsOf: f, encoding: .utf8)).intersection(Self.ours)
                let extra = used.subtracting(may)
                #expect(extra.isEmpty, "\(target)/\(f.lastPathComponent) imports \(extra.sorted())")
                checked += 1
            }
        }
        // Every Swift file of the package is some target's (none escapes the table).
        let all = FileManager.default.enumerator(at: Self.root.appendingPathComponent("Sources"), includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }.count ?? 0
        #expect(checked == all && all > 0, "\(checked) of \(all) files checked")
    }

    @Test(arguments: ["UbiqCore", "UbiqProtocol"])
    func pureTargetsStayPure(target: String) throws {
        let files = try Self.files(target)
        #expect(!files.isEmpty)
        #expect(target != "UbiqCore" || files.contains { $0.path.contains("/Query/") }, "the walk reaches UbiqCore/Query/")
        let forbidden = ["import NIO", "import Hummingbird", "import GRDB", "import Dispatch", "import CNCurses", "import AsyncHTTPClient",
                         "Date()", "UUID()", ".random(", "FileManager", "DispatchQueue", "UbiqStorage", "UbiqServer", "UbiqEngine"]
        for f in files {
            let text = try String(contentsOf: f, encoding: .utf8)
            for word in forbidden {
                #expect(!text.contains(word), "\(target)/\(f.lastPathComponent) contains '\(word)'")
            }
        }
    }

    /// The engine's executors take values and effect protocols and return outcomes; only the
    /// engine's own files (`SyncEngine.swift`, `SyncEngine+….swift`) act on its state (#38 §1:
    /// 38 functions in six other files took `isolated SyncEngine`).
    @Test func nothingOutsideTheEngineTakesItIsolated() throws {
        var offenders: [String] = []
        let all = FileManager.default.enumerator(at: Self.root.appendingPathComponent("Sources"), includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        for f in all where !f.lastPathComponent.hasPrefix("SyncEngine") {
            if try String(contentsOf: f, encoding: .utf8).contains("isolated SyncEngine") { offenders.append(f.lastPathComponent) }
        }
        #expect(all.count > 100 && offenders.isEmpty, "\(offenders)")
    }

    @Test func importsAreReadAsSwiftWritesThem() {
        let text = "import Foundation\n@testable import UbiqEngine\n@_spi(UbiqTools) import Ubiquity\nimport struct UbiqCore.ItemID\n// import UbiqServer\n"
        #expect(Self.imports(text) == ["Foundation", "UbiqEngine", "Ubiquity", "UbiqCore"])
    }
}
