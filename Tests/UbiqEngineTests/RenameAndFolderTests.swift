import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine
import UbiqTesting

/// #24 §2 `r` rename and `n` new folder, as the engine does them for the front end: a local
/// item is renamed in the folder (never over anything), a cloud-only one is moved on the
/// server; a new folder is made in the folder; every device follows.
@Suite("Rename and new folder")
struct RenameAndFolderTests {
    func p(_ s: String) -> RelativePath { try! RelativePath(validating: s) }

    @Test func renamesAndNewFoldersReachEveryDeviceAndNeverOverwrite() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B", download: .onDemand)
            try a.write("Documents/draft.txt", "words")
            try a.write("Documents/taken.txt", "keep me")
            #expect(await eventually { await b.engine.listing().contains { $0.path.string == "Documents/taken.txt" } })
            // A local rename, from A.
            #expect(try await a.engine.renameItem(p("Documents/draft.txt"), to: "final.txt").string == "Documents/final.txt")
            #expect(a.read("Documents/final.txt") == "words" && !a.exists("Documents/draft.txt"))
            #expect(await eventually { await b.engine.listing().contains { $0.path.string == "Documents/final.txt" } })
            // Never over a taken name; bad names refused; nothing changes.
            await #expect(throws: EngineError.self) { _ = try await a.engine.renameItem(p("Documents/final.txt"), to: "taken.txt") }
            for bad in ["", "a/b", "..", "."] {
                await #expect(throws: EngineError.self) { _ = try await a.engine.renameItem(p("Documents/final.txt"), to: bad) }
            }
            #expect(a.read("Documents/taken.txt") == "keep me" && a.read("Documents/final.txt") == "words")
            // On B the file is only in the cloud: the server moves it; A follows.
            #expect(!b.exists("Documents/final.txt"))
            _ = try await b.engine.renameItem(p("Documents/final.txt"), to: "published.txt")
            #expect(await eventually { a.read("Documents/published.txt") == "words" && !a.exists("Documents/final.txt") })
            #expect(!b.exists("Documents/published.txt"), "still only in the cloud on B")
            // A new folder from B reaches A.
            try await b.engine.makeFolder(p("Documents/Projects"))
            #expect(await eventually { var d: ObjCBool = false; return FileManager.default.fileExists(atPath: a.url("Documents/Projects").path, isDirectory: &d) && d.boolValue })
            await #expect(throws: EngineError.self) { try await b.engine.makeFolder(p("Documents/Projects")) }
        }
    }
}
