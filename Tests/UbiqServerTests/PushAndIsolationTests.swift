import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqTesting

/// Collects push messages from a device's channel.
actor PushInbox {
    var messages: [PushMessage] = []
    func add(_ m: PushMessage) { messages.append(m) }

    /// Waits (bounded) until a message matching `predicate` has arrived.
    func wait(timeout: Duration = .seconds(10), _ predicate: @Sendable (PushMessage) -> Bool) async -> PushMessage? {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: timeout)
        while clock.now < end {
            if let m = messages.first(where: predicate) { return m }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }
}

@Suite("Push channel and isolation")
struct PushAndIsolationTests {
    @Test(arguments: DatabaseKind.available) func commitsAndKVSetsArePushedToOtherDevices(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, lid) = try await server.device("alice", name: "laptop")
            let (phone, _) = try await server.device("alice", name: "phone")
            let (bob, _) = try await server.device("bob")
            let phoneInbox = PushInbox(), bobInbox = PushInbox()
            let t1 = Task { try await phone.listen { await phoneInbox.add($0) } }
            let t2 = Task { try await bob.listen { await bobInbox.add($0) } }
            defer { t1.cancel(); t2.cancel() }
            #expect(await phoneInbox.wait { $0.kind == .hello } != nil)
            #expect(await bobInbox.wait { $0.kind == .hello } != nil)

            let start = ContinuousClock.now
            let r = try await commitFile(laptop, "Documents/new.txt", "hi")
            let m = await phoneInbox.wait { $0.kind == .changes && $0.cursor >= r.item.changeSeq }
            let latency = ContinuousClock.now - start
            #expect(m?.container == notes && m?.origin == lid)
            print("push: commit+complete → notification in \(latency)")
            _ = try await laptop.kvSet(notes, [KVEntry(key: "theme", value: .string("dark"), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: lid)])
            #expect(await phoneInbox.wait { $0.kind == .kv && $0.store == notes.string } != nil)
            // Bob hears nothing of Alice's changes.
            #expect(await bobInbox.messages.allSatisfy { $0.kind == .hello })
            // A push connection without a valid token is refused.
            let forged = UbiqAPIClient(baseURL: server.baseURL, token: "ubq_nope")
            await #expect(throws: ClientError.self) { try await forged.listen { _ in } }
        }
    }

    /// #23 row 10: a revoked device's open push channel kept receiving notifications. Revoking
    /// it closes the channel at once, and nothing is sent to it afterwards.
    @Test(arguments: DatabaseKind.available) func aRevokedDevicesPushChannelIsClosed(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, _) = try await server.device("alice", name: "laptop")
            let (phone, pid) = try await server.device("alice", name: "phone")
            let inbox = PushInbox(), closed = ManagedFlag()
            let listening = Task {
                _ = try? await phone.listen { await inbox.add($0) }
                closed.set()
            }
            defer { listening.cancel() }
            #expect(await inbox.wait { $0.kind == .hello } != nil)
            try await laptop.revoke(device: pid)
            #expect(await eventually(timeout: .seconds(10)) { closed.isSet }, "the revoked device's push channel is still open")
            _ = try await commitFile(laptop, "Documents/after.txt", "secret")
            #expect(await inbox.wait(timeout: .seconds(1)) { $0.kind == .changes } == nil, "a change reached the revoked device")
            await #expect(throws: ClientError.self) { _ = try await phone.account() }
        }
    }

    /// A server that stops (graceful shutdown) with push channels open ends every one at once —
    /// the devices reconnect to the next server — and its stop is not held up by them.
    @Test func aStoppingServerEndsItsPushChannelsAtOnce() async throws {
        guard let database = try await DatabaseKind.sqlite.fresh() else { return }
        let server = try await TestServer.start(database: database)
        try await server.user("alice")
        let clients = [try await server.device("alice", name: "laptop").0, try await server.device("alice", name: "phone").0]
        let inboxes = clients.map { _ in PushInbox() }, ended = clients.map { _ in ManagedFlag() }
        let listening = clients.indices.map { i in
            Task {
                _ = try? await clients[i].listen { await inboxes[i].add($0) }
                ended[i].set()
            }
        }
        defer { listening.forEach { $0.cancel() } }
        for inbox in inboxes { #expect(await inbox.wait { $0.kind == .hello } != nil) }
        let stopping = ContinuousClock.now
        await server.stop()
        let took = ContinuousClock.now - stopping
        #expect(await eventually(timeout: .seconds(10)) { ended.allSatisfy(\.isSet) }, "a push channel outlived its server")
        #expect(took < .seconds(10), "the stop took \(took) with push channels open")
    }

    /// A device revoked where this server does not hear of it (another server of the database,
    /// `ubiq server device revoke` in another process: here, straight in the store) loses its
    /// push channel at the server's next look (`PushTokenWatch`, every 5 s) — no channel reads
    /// its own token any more — and the account's other channels stay open.
    @Test(arguments: DatabaseKind.available) func aDeviceRevokedElsewhereLosesItsPushChannelAtTheNextLook(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (laptop, _) = try await server.device("alice", name: "laptop")
            let (phone, pid) = try await server.device("alice", name: "phone")
            let phoneInbox = PushInbox(), laptopInbox = PushInbox(), phoneClosed = ManagedFlag(), laptopClosed = ManagedFlag()
            let listening = [Task { _ = try? await phone.listen { await phoneInbox.add($0) }; phoneClosed.set() },
                             Task { _ = try? await laptop.listen { await laptopInbox.add($0) }; laptopClosed.set() }]
            defer { listening.forEach { $0.cancel() } }
            #expect(await phoneInbox.wait { $0.kind == .hello } != nil)
            #expect(await laptopInbox.wait { $0.kind == .hello } != nil)
            let account = try #require(try await server.services.metadata.account(named: "alice")).id
            #expect(try await server.services.metadata.revokeDevice(accountID: account, deviceID: pid))
            #expect(await eventually(timeout: .seconds(15)) { phoneClosed.isSet }, "the channel of a device revoked elsewhere is still open")
            _ = try await commitFile(laptop, "Documents/after.txt", "still here")
            #expect(await laptopInbox.wait(timeout: .seconds(10)) { $0.kind == .changes } != nil, "the laptop's channel still carries changes")
            #expect(!laptopClosed.isSet)
            let open = await server.services.push.connectionCount(account: account)
            #expect(open == 1)
        }
    }

    @Test(arguments: DatabaseKind.available) func accountsNeverSeeEachOthersData(_ db: DatabaseKind) async throws {
        try await withServer(db) { server in
            let (alice, _) = try await server.device("alice")
            let (bob, bid) = try await server.device("bob")
            let a = try await commitFile(alice, "Documents/secret.txt", "alice only")
            _ = try await alice.kvSet(notes, [KVEntry(key: "k", value: .string("alice"), stamp: HLCTimestamp(wallMillis: 1, counter: 0), device: try await alice.account().device)])
            // Same container name, separate data.
            #expect(try await bob.changes(notes, after: 0).items.isEmpty)
            #expect(try await bob.kvAll(notes).entries.isEmpty)
            #expect(try await bob.trash(notes).items.isEmpty)
            // Alice's item and version IDs mean nothing to Bob.
            await expectCode(.notFound) { _ = try await bob.versions(notes, item: a.item.id) }
            await expectCode(.notFound) { _ = try await bob.manifest(notes, version: a.version!.id) }
            await expectCode(.notFound) { _ = try await bob.delete(notes, item: a.item.id) }
            await expectCode(.notFound) { _ = try await bob.move(notes, item: a.item.id, to: path("mine.txt")) }
            await expectCode(.notFound) { _ = try await bob.resolve(notes, item: a.item.id, keep: a.version!.id) }
            await expectCode(.notFound) { _ = try await bob.complete(notes, version: a.version!.id) }
            await expectCode(.notFound) { _ = try await bob.downloadChunk(a.version!.hash) }
            // Bob committing an item with Alice's item ID creates his own item; Alice's is untouched.
            let b = try await commitFile(bob, "Documents/secret.txt", "bob's", item: a.item.id)
            #expect(b.outcome == .created)
            #expect(try await download(alice, version: try await alice.versions(notes, item: a.item.id).current!.id) == "alice only")
            #expect(bid != a.version!.device)
        }
    }
}
