import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqStorage
import UbiqTesting

/// #45 row 2: the server keeps an account's newest purged deletes only; a device whose change
/// feed reaches behind what it forgot (`cursor_expired`) reads the whole feed again and takes
/// what it no longer lists as deleted — an edit made meanwhile still wins, nothing else is lost.
@Suite("Deletes the server forgot")
struct ForgottenDeletesTests {
    @Test func aDeviceBehindTheForgottenDeletesReadsTheFeedAgainAndKeepsItsEdit() async throws {
        try await withFleet { fleet in
            let store = try #require(fleet.server.services.metadata as? SQLMetadataStore)
            store.deletesKept.store(2, ordering: .relaxed)
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            for i in 0..<4 { try a.write("Documents/f\(i).txt", "file \(i)") }
            try a.write("Documents/old/inside.txt", "in a folder")
            try a.write("Documents/stays.txt", "never deleted")
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            await b.stop()
            // While B is away: it edits f0; A deletes f0…f3 and the folder, and the trash is
            // emptied — six deletes, of which the server keeps the newest two.
            try b.write("Documents/f0.txt", "edited on B while away")
            for i in 0..<4 { try FileManager.default.removeItem(at: a.url("Documents/f\(i).txt")) }
            try FileManager.default.removeItem(at: a.url("Documents/old"))
            let client = UbiqAPIClient(baseURL: fleet.server.baseURL, token: a.config.token)
            let container = a.config.container
            #expect(await eventually {
                let items = (try? await client.changes(container, after: 0).items) ?? []
                return items.filter { $0.deletedAt != nil }.count == 6
            }, "A's six deletes reached the server")
            #expect(try await client.emptyTrash(container).items == 6)
            let listed = try await client.changes(container, after: 0).items
            #expect(listed.filter { $0.deletedAt != nil }.count == 2, "the server kept two deletes")
            try await b.restart()
            #expect(await eventually {
                b.read("Documents/f0.txt") == "edited on B while away" && a.read("Documents/f0.txt") == "edited on B while away"
                    && (1..<4).allSatisfy { !b.exists("Documents/f\($0).txt") } && !b.exists("Documents/old")
                    && b.read("Documents/stays.txt") == "never deleted"
            }, "\(describeDiff(a, b))")
            #expect(await converge(a, b), "\(describeDiff(a, b))")
            // B goes on syncing from where the whole feed left it.
            try a.write("Documents/after.txt", "after the reload")
            #expect(await eventually { b.read("Documents/after.txt") == "after the reload" })
        }
    }
}
