import Foundation
import Testing
import Ubiquity
import UbiqCore
import UbiqTesting

extension DaemonSuites {
    /// Every reason a settings change is reported with, through `import Ubiquity` against real
    /// daemons and a real server process: the first sync of a store, writes the server refuses for
    /// the store's limits, another account on the device — and a stream that outlives its daemon.
    @Suite("Settings change reasons through the library", .serialized)
    struct SettingsReasonsTests {
        static let prefs = "iCloud.com.example.prefs"

        /// The keys a store holds now (empty when it cannot be read).
        static func keys(_ store: KeyValueStore) async -> Set<String> {
            do { return Set(try await store.dictionaryRepresentation().keys) } catch {
                print("[settings] cannot read the store: \(error)")
                return []
            }
        }

        /// The keys of the changes with `reason`, in order.
        static func keys(_ changes: Collected<KeyValueStore.Change>, _ reason: KeyValueStore.Reason) -> [String] {
            changes.all.filter { $0.reason == reason }.flatMap(\.keys)
        }

        /// Listens to `store` until the returned task is cancelled; returns once listening.
        static func listen(_ store: KeyValueStore, into changes: Collected<KeyValueStore.Change>, retry: Duration = .seconds(1)) async -> Task<Void, Error> {
            let ready = Collected<Bool>()
            let task = Task { for try await c in store.changes(ready: { ready.add(true) }, retry: retry) { changes.add(c) } }
            _ = await eventually { !ready.all.isEmpty }
            return task
        }

        @Test func aStoresFirstSyncIsReportedAsTheInitialSyncThenServerChanges() async throws {
            try await Daemons.with(["A", "B"]) { try await firstSync(on: $0) }
        }

        func firstSync(on d: Daemons) async throws {
            let a = d.ubiquity("A"), b = d.ubiquity("B")
            let storeA = KeyValueStore(Self.prefs, ubiquity: a)
            #expect(try await storeA.set(["theme": .string("dark"), "size": .int(12)]), "sent to the server at once")

            // B has never synced this store: the program's request adds it, and hears its first sync.
            #expect(try await b.containers() == ["iCloud.default"])
            let changes = Collected<KeyValueStore.Change>()
            let listening = await Self.listen(KeyValueStore(Self.prefs, ubiquity: b), into: changes)
            defer { listening.cancel() }
            let initial = await eventually(timeout: .seconds(30)) { !Self.keys(changes, .initialSyncChange).isEmpty }
            #expect(initial, "\(changes.all)")
            #expect(changes.all.first?.reason == .initialSyncChange)
            #expect(Self.keys(changes, .initialSyncChange) == ["size", "theme"])
            #expect(try await b.containers().contains(Self.prefs))
            #expect(try await KeyValueStore(Self.prefs, ubiquity: b).string(forKey: "theme") == "dark")

            // From now on A's writes are server changes, and the first sync is not told again.
            try await storeA.removeObject(forKey: "size")
            let later = await eventually(timeout: .seconds(30)) { !Self.keys(changes, .serverChange).isEmpty }
            #expect(later, "\(changes.all)")
            #expect(Self.keys(changes, .serverChange) == ["size"])
            #expect(changes.all.count == 2, "\(changes.all)")
        }

        @Test func writesTheServerRefusesForTheStoresLimitAreAQuotaViolationOnTheDeviceThatWroteThem() async throws {
            try await Daemons.with(["A", "B"]) { try await quota(on: $0) }
        }

        func quota(on d: Daemons) async throws {
            let storeA = KeyValueStore(ubiquity: d.ubiquity("A")), storeB = KeyValueStore(ubiquity: d.ubiquity("B"))
            let heardA = Collected<KeyValueStore.Change>(), heardB = Collected<KeyValueStore.Change>()
            let listenA = await Self.listen(storeA, into: heardA), listenB = await Self.listen(storeB, into: heardB)
            defer { listenA.cancel(); listenB.cancel() }

            // Offline, each device writes 600 KB: each fits the 1 MB store on its own, not both.
            d.stopServer()
            let sentA = try await storeA.set(.data(Data(repeating: 0xA, count: 600_000)), forKey: "a.blob")
            let sentB = try await storeB.set(.data(Data(repeating: 0xB, count: 600_000)), forKey: "b.blob")
            #expect(!sentA && !sentB, "kept on each device for now")
            try d.startServer()

            // Whichever device sends second is refused: told with its key; both end with the other's.
            let refused = await eventually(timeout: .seconds(60)) {
                !Self.keys(heardA, .quotaViolationChange).isEmpty || !Self.keys(heardB, .quotaViolationChange).isEmpty
            }
            #expect(refused, "A heard \(heardA.all), B heard \(heardB.all)")
            let aLost = !Self.keys(heardA, .quotaViolationChange).isEmpty
            let (loser, winner) = aLost ? (heardA, heardB) : (heardB, heardA)
            let (loserKey, winnerKey) = aLost ? ("a.blob", "b.blob") : ("b.blob", "a.blob")
            #expect(Self.keys(loser, .quotaViolationChange) == [loserKey])
            #expect(Self.keys(winner, .quotaViolationChange).isEmpty, "the write that fit is kept")
            _ = try await storeA.synchronize()
            _ = try await storeB.synchronize()
            let expected: Set<String> = [winnerKey]
            let converged = await eventually(timeout: .seconds(30)) {
                let keysA = await Self.keys(storeA)
                let keysB = await Self.keys(storeB)
                return keysA == expected && keysB == expected
            }
            let keysA = await Self.keys(storeA)
            let keysB = await Self.keys(storeB)
            #expect(converged, "both end with the write that fit, only it: A has \(keysA), B has \(keysB); A heard \(heardA.all), B \(heardB.all)")
        }

        @Test func anotherAccountOnTheDeviceIsAnAccountChangeAndTheStreamOutlivesItsDaemon() async throws {
            try await Daemons.with(["A"], others: ["bob"]) { try await accountChange(on: $0) }
        }

        func accountChange(on d: Daemons) async throws {
            let a = d.ubiquity("A")
            #expect(try await KeyValueStore(ubiquity: a).set(["theme": .string("dark"), "alice.only": .bool(true)]))

            // Bob's own settings, written from another device of his.
            try d.login("bob-phone", as: "bob")
            for (key, value) in [("theme", "light"), ("bob.only", "yes")] {
                let (status, _, why) = try ChildProcess.runUbiq(["kv", "set", key, value, "--home", d.home("bob-phone").path])
                #expect(status == 0, "\(why)")
            }

            // A program on A listens the whole time, to settings and to who is signed in.
            let identities = Collected<String?>()
            let watchingIdentity = Task { for await token in a.identityChanges(retry: .milliseconds(200)) { identities.add(token) } }
            defer { watchingIdentity.cancel() }
            let alice = await a.identityToken
            #expect(await eventually { identities.all.first == .some(alice) })
            let changes = Collected<KeyValueStore.Change>()
            let listening = await Self.listen(KeyValueStore(ubiquity: a), into: changes, retry: .milliseconds(200))
            defer { listening.cancel() }

            // The daemon restarts for the same account: the stream goes on and hears later changes.
            d.stopDaemon("A")
            try d.startDaemon("A")
            #expect(try await KeyValueStore(ubiquity: a).set(.string("blue"), forKey: "accent"))
            try d.login("alice-phone", as: "alice")
            let (status, _, why) = try ChildProcess.runUbiq(["kv", "set", "theme", "sepia", "--home", d.home("alice-phone").path])
            #expect(status == 0, "\(why)")
            let alive = await eventually(timeout: .seconds(30)) { Self.keys(changes, .serverChange).contains("theme") }
            #expect(alive, "alive after the restart: \(changes.all)")

            // The device is signed in to bob's account: told once, with every key whose value differs.
            d.stopDaemon("A")
            try d.login("A", as: "bob")
            try d.startDaemon("A")
            let switched = await eventually(timeout: .seconds(30)) { !Self.keys(changes, .accountChange).isEmpty }
            #expect(switched, "\(changes.all)")
            let told = await eventually { Set(Self.keys(changes, .accountChange)) == ["accent", "alice.only", "bob.only", "theme"] }
        #expect(told, "alice's keys gone, bob's arrived: \(changes.all)")
            #expect(Self.keys(changes, .initialSyncChange).isEmpty, "the account change is the news, not also a first sync: \(changes.all)")
            let bob = try #require(await a.identityToken)
            #expect(bob != alice)
            #expect(await eventually { identities.all.last == .some(bob) }, "\(identities.all)")
            #expect(identities.all.contains { $0 == nil }, "signed out while the daemon was stopped: \(identities.all)")
            let now = try await KeyValueStore(ubiquity: a).dictionaryRepresentation()
            #expect(now == ["theme": .string("light"), "bob.only": .string("yes")], "bob's settings only")
        }
    }
}
