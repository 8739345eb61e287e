import Foundation
import Testing
import UbiqCore
@testable import UbiqStorage
import UbiqTesting

/// The change feed never skips: with several writers committing to one container at once, a
/// reader that follows the feed page by page — and never looks back behind its cursor — ends up
/// with every change a writer was told had committed. (On PostgreSQL, change numbers are drawn
/// in one order and can commit in another; a reader at cursor N would miss N−1 committing
/// after it read. The account's lock makes them commit in order.)
@Suite("Change feed under concurrent writers")
struct ChangeFeedConcurrencyTests {
    static let container = try! ContainerID(validating: "iCloud.feed")

    @Test(arguments: DatabaseKind.available) func aReaderFollowingTheFeedMissesNoCommittedChange(_ kind: DatabaseKind) async throws {
        let dir = try TempDirectory("feed")
        defer { dir.remove() }
        guard let (store, location) = try await kind.openStore(in: dir) else { return }
        let seed = SeededRandom.forTest("feed.concurrent").seed
        let now = Date()
        let account = try await store.createAccount(name: "alice", password: PasswordRecord(salt: [1], iterations: 1, derived: [2]), quota: 1 << 40, now: now)
        let writers = 10, commitsEach = 30
        let finished = Flag()
        // The reader, on connections of its own (as a device on another server): follows the
        // feed while the writers run, then reads to its end once.
        let other = try await DatabaseKind.reopen(location, in: dir)
        let reader = Task {
            let ctx = AuthContext(accountID: account.id, user: "alice", deviceID: DeviceID(uuid: UUID()), deviceName: "reader")
            var cursor: Int64 = 0
            var seen: [String: String] = [:]
            while true {
                let last = finished.isSet
                let page = try await other.changes(ctx, container: Self.container, after: cursor, limit: 7)
                for item in page.items { seen[item.id.description] = item.path.string }
                cursor = page.cursor
                if page.items.isEmpty { if last { return seen }; await Task.yield() }
            }
        }
        // Each writer makes folders and renames each (neither touches the account's usage, so
        // nothing but the account's lock orders their change numbers).
        let all = try await withThrowingTaskGroup(of: [String: String].self) { group in
            for w in 0..<writers {
                group.addTask {
                    let ctx = AuthContext(accountID: account.id, user: "alice", deviceID: DeviceID(uuid: UUID()), deviceName: "device \(w)")
                    var done: [String: String] = [:]
                    for i in 0..<commitsEach {
                        let item = ItemID(uuid: UUID())
                        let input = CommitInput(itemID: item, versionID: VersionID(uuid: UUID()), path: try RelativePath(validating: "w\(w)-\(i)"),
                                                kind: .folder, base: nil, modified: now, manifest: nil)
                        _ = try await store.commit(ctx, container: Self.container, input, now: now)
                        let renamed = try RelativePath(validating: "w\(w)-\(i) renamed")
                        _ = try await store.move(ctx, container: Self.container, item: item, to: renamed, now: now)
                        done[item.description] = renamed.string
                    }
                    return done
                }
            }
            return try await group.reduce(into: [String: String]()) { $0.merge($1) { a, _ in a } }
        }
        finished.set()
        let seen = try await reader.value
        #expect(all.count == writers * commitsEach)
        // Every item where a writer was told it is now, as the feed last said.
        let wrong = all.filter { seen[$0.key] != $0.value }
        #expect(wrong.isEmpty, "\(wrong.count) of \(all.count) items not where the feed says (seed \(seed)): \(wrong.prefix(3))")
        await other.database.close()
        await DatabaseKind.dispose(store, location)
    }
}

/// A flag set once, read from any task.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
