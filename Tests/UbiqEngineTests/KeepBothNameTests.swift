import Foundation
import Testing
import UbiqClient
import UbiqCore
@testable import UbiqEngine
import UbiqProtocol
import UbiqTesting

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

    /// Keep-both resolves in favour of the current version; when that has not finished
    /// uploading the server would refuse the resolve after the copies were made, and a retry
    /// would copy them again. It is refused before anything is copied.
    @Test func anUnfinishedCurrentVersionIsRefusedBeforeAnythingIsCopied() async throws {
        let server = try await TestServer.start()
        do {
            try await server.user("alice")
            let (laptop, _) = try await server.device("alice", name: "laptop")
            let (phone, _) = try await server.device("alice", name: "phone")
            let box = try ContainerID(validating: "TEAM.com.example.notes")
            let path = try RelativePath(validating: "Documents/n.txt")
            func commit(_ c: UbiqAPIClient, _ bytes: [UInt8], item: ItemID, base: VersionID?, upload: Bool) async throws -> CommitResponse {
                let m = Manifest.of(bytes)
                var offset = 0
                for chunk in m.chunks where upload {
                    try await c.uploadChunk(chunk.hash, Array(bytes[offset..<(offset + chunk.size)]))
                    offset += chunk.size
                }
                let r = try await c.commit(box, CommitRequest(itemID: item, versionID: VersionID(uuid: UUID()), path: path, kind: .file,
                                                              base: base, modified: Date(), manifest: m))
                if upload, let v = r.version, !v.uploaded { _ = try await c.complete(box, version: v.id) }
                return r
            }
            let item = ItemID(uuid: UUID())
            let v1 = try #require(try await commit(laptop, Array("v1".utf8), item: item, base: nil, upload: true).version?.id)
            // The laptop's edit is listed but its content never arrives; the phone's is a conflict.
            _ = try await commit(laptop, Array(repeating: 7, count: 100_000), item: item, base: v1, upload: false)
            #expect(try await commit(phone, Array("phone edit".utf8), item: item, base: v1, upload: true).outcome == .conflict)
            let before = try await laptop.changes(box, after: 0).items.count
            await #expect(throws: EngineError.self) {
                _ = try await KeepBoth.perform(phone, container: box, item: item, path: path, parent: nil)
            }
            #expect(try await laptop.changes(box, after: 0).items.count == before, "no copy was made")
            #expect(try await laptop.versions(box, item: item).conflicts.count == 1, "the conflict is still there to resolve")
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
