import Foundation
import Logging
import Testing
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
import UbiqProtocol
import UbiqTesting

/// Collects a store's change notifications.
actor ChangeLog {
    var changes: [SettingsReplica.Change] = []
    func note(_ c: SettingsReplica.Change) { changes.append(c) }
    func keys(_ reason: SettingsReplica.ChangeReason) -> Set<String> { Set(changes.filter { $0.reason == reason }.flatMap(\.keys)) }
}

/// A clock offset a test can change while a store runs.
final class Offset: @unchecked Sendable {
    private let lock = NSLock()
    private var millis: Int64
    init(_ millis: Int64) { self.millis = millis }
    var value: Int64 {
        get { lock.withLock { millis } }
        set { lock.withLock { millis = newValue } }
    }
}

/// The synced key-value store (product §4) across real devices and a real server.
@Suite("Key-value store", .serialized)
struct KeyValueStoreTests {
    static let hours: Int64 = 3_600_000

    func store(_ d: TestDevice, clockOffset: Int64 = 0) throws -> SettingsReplica {
        try SettingsReplica(home: d.home, config: d.config, physicalMillis: { Int64(Date().timeIntervalSince1970 * 1000) + clockOffset })
    }

    func listen(_ s: SettingsReplica) async -> ChangeLog {
        let log = ChangeLog()
        _ = await s.addListener { c in Task { await log.note(c) } }
        return log
    }

    @Test(arguments: [Backend.embedded, .encrypted])
    func everyTypeRoundTripsAndReasonsAreReported(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            let ka = try store(a), kb = try store(b)
            let logA = await listen(ka), logB = await listen(kb)
            let values: [String: KVValue] = [
                "s": .string("héllo 文"), "i": .int(-42), "d": .double(3.25), "b": .bool(true),
                "t": .date(KVDateFormat.roundedToMillis(Date(timeIntervalSince1970: 1_800_000_000.123))), "data": .data(Data([0, 1, 2, 255])),
                "arr": .array([.int(1), .string("two"), .array([.bool(false)])]),
                "dict": .dictionary(["nested": .dictionary(["deep": .double(-0.5)]), "list": .array([])]),
            ]
            for (k, v) in values { try await ka.set(v, forKey: k) }
            #expect(await ka.synchronize())
            // B's first sync: everything, reported as the initial sync.
            #expect(await kb.synchronize())
            for (k, v) in values { #expect(await kb.value(forKey: k) == v, "\(k)") }
            #expect(await eventually { await logB.keys(.initialSyncChange) == Set(values.keys) })
            // Later changes are server changes; a device's own writes are never reported to it.
            try await ka.set(.string("changed"), forKey: "s")
            try await ka.removeValue(forKey: "i")
            #expect(await ka.synchronize())
            #expect(await kb.synchronize())
            let (s1, i1) = (await kb.value(forKey: "s"), await kb.value(forKey: "i"))
            #expect(s1 == .string("changed") && i1 == nil)
            #expect(await eventually { await logB.keys(.serverChange) == ["s", "i"] })
            let ownChanges = await logA.changes
            #expect(ownChanges.isEmpty, "A was told about its own writes: \(ownChanges)")
            // The cache survives a restart (a new store on the same home).
            let kb2 = try store(b)
            #expect(await kb2.value(forKey: "dict") == values["dict"])
            // History comes back opened (newest first; the delete has no value).
            let history = try await kb.history(forKey: "i")
            #expect(history.map(\.key) == ["i", "i"] && history.first?.value == nil && history.last?.value == .int(-42), "\(history)")
            guard backend == .encrypted else { return }
            // Encrypted: the server's store holds tokens and sealed values, no key or value.
            try await ka.set(.string("MarkerSettingValueQQ"), forKey: "MarkerSettingKeyQQ")
            #expect(await ka.synchronize())
            let raw = try await UbiqAPIClient(baseURL: fleet.server.baseURL, token: a.config.token).kvAll(a.config.container).entries
            #expect(raw.count == values.count && raw.allSatisfy { $0.key.count == 22 && values[$0.key] == nil })
            var found: [String] = []
            if let e = FileManager.default.enumerator(atPath: fleet.server.directory.url.path) {
                while let f = e.nextObject() as? String {
                    guard let d = FileManager.default.contents(atPath: fleet.server.directory.url.path + "/" + f) else { continue }
                    for m in ["MarkerSettingValueQQ", "MarkerSettingKeyQQ", "héllo 文", "changed"] where d.range(of: Data(m.utf8)) != nil { found.append("\(f): \(m)") }
                }
            }
            #expect(found.isEmpty, "\(found)")
        }
    }

    @Test func limitsAreRefusedBeforeAnythingIsStored() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            let ka = try store(a), kb = try store(b)
            try await ka.set(.string("kept"), forKey: "existing")
            #expect(await ka.synchronize())
            func refused(_ code: ErrorCode, _ body: () async throws -> Void) async {
                do { try await body(); Issue.record("not refused: \(code)") } catch let e as CoreError {
                    #expect(e.code == code, "\(e)")
                } catch { Issue.record("\(error)") }
            }
            await refused(.kvKeyInvalid) { try await ka.set(.int(1), forKey: "") }
            await refused(.kvKeyInvalid) { try await ka.set(.int(1), forKey: String(repeating: "k", count: 65)) }
            await refused(.kvValueTooLarge) { try await ka.set(.data(Data(count: 1 << 20)), forKey: "big") }
            await refused(.kvStoreTooLarge) {
                try await ka.setValues(Dictionary(uniqueKeysWithValues: (0..<3).map { ("part\($0)", KVValue?.some(.data(Data(count: 400_000)))) }))
            }
            await refused(.kvTooManyKeys) {
                try await ka.setValues(Dictionary(uniqueKeysWithValues: (0..<1024).map { ("k\($0)", KVValue?.some(.bool(true))) }))
            }
            await refused(.invalidValue) { try await ka.set(.double(.nan), forKey: "nan") }
            // Nothing stored, nothing pending, nothing reaches another device.
            let (keysA, pendingA) = (await ka.allEntries().map(\.key), await ka.pendingKeys())
            #expect(keysA == ["existing"] && pendingA.isEmpty)
            #expect(await kb.synchronize())
            #expect(await kb.allEntries().map(\.key) == ["existing"])
            // Exactly at the limits is fine: 1024 keys in all, keys of 64 bytes.
            try await ka.setValues(Dictionary(uniqueKeysWithValues: (0..<1023).map { (String(format: "%064d", $0), KVValue?.some(.bool(true))) }))
            #expect(await ka.synchronize())
            #expect(await ka.usage().keys == 1024)
        }
    }

    @Test(arguments: [Backend.embedded, .encrypted])
    func multiKeySetIsSeenAllOrNothing(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            let ka = try store(a), kb = try store(b)
            #expect(await kb.synchronize())
            let logB = await listen(kb)
            let keys = (0..<700).map { "setting.\($0)" }  // more than one page of the change feed
            // B keeps syncing while A writes; whatever B sees at any moment holds all or none.
            let watcher = Task {
                var states: [Int] = []
                while !Task.isCancelled {
                    await kb.synchronize()
                    var n = 0
                    for k in keys where await kb.value(forKey: k) != nil { n += 1 }
                    states.append(n)
                    if n == keys.count { break }
                }
                return states
            }
            try await ka.setValues(Dictionary(uniqueKeysWithValues: keys.map { ($0, KVValue?.some(.string("v"))) }))
            #expect(await ka.synchronize())
            let states = await watcher.value
            #expect(states.allSatisfy { $0 == 0 || $0 == keys.count }, "B saw a partial set: \(Set(states))")
            // Notifications are delivered through tasks: wait for the first, which must carry every key.
            #expect(await eventually { await !logB.changes.isEmpty })
            let changes = await logB.changes
            #expect(changes.count == 1 && Set(changes[0].keys) == Set(keys),
                    "one notification with every key; got \(changes.map { "\($0.reason.rawValue): \($0.keys.count) keys \($0.keys.prefix(3))" })")
        }
    }

    @Test(arguments: [Backend.embedded, .encrypted])
    func causallyLaterWriteWinsDespiteClockSkewAndTiesGoByDevice(_ backend: Backend) async throws {
        try await withFleet(backend: backend) { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            // A's clock runs five hours ahead of B's.
            let ka = try store(a, clockOffset: 5 * Self.hours), kb = try store(b)
            try await ka.set(.string("dark"), forKey: "theme")
            #expect(await ka.synchronize())
            #expect(await kb.synchronize())
            #expect(await kb.value(forKey: "theme") == .string("dark"))
            // B has seen A's write, so B's later write wins although B's clock is hours behind.
            try await kb.set(.string("light"), forKey: "theme")
            #expect(await kb.synchronize())
            #expect(await ka.synchronize())
            let themes = [await ka.value(forKey: "theme"), await kb.value(forKey: "theme")]
            #expect(themes == [.string("light"), .string("light")])
            // Concurrent writes (neither saw the other): ordered by timestamp — A's ahead clock wins.
            try await kb.set(.int(1), forKey: "race")
            try await ka.set(.int(2), forKey: "race")
            #expect(await kb.synchronize())
            #expect(await ka.synchronize())
            #expect(await kb.synchronize())
            let races = [await ka.value(forKey: "race"), await kb.value(forKey: "race")]
            #expect(races == [.int(2), .int(2)])
        }
    }

    /// A device whose clock is days ahead has its writes refused by the server (`kv_clock_ahead`):
    /// they wait, with the reason in `lastError`, and go up once the clock is right.
    @Test func writesFromAClockDaysAheadWaitUntilItIsRight() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            let offset = Offset(2 * 24 * Self.hours)
            let ka = try SettingsReplica(home: a.home, config: a.config, physicalMillis: { Int64(Date().timeIntervalSince1970 * 1000) + offset.value })
            let kb = try store(b)
            try await ka.set(.string("future"), forKey: "k")
            #expect(await ka.synchronize() == false)
            let why = await ka.lastError ?? "no error"
            #expect(why.contains("clock"), "\(why)")
            #expect(await ka.value(forKey: "k") == .string("future"), "the write is kept")
            _ = await kb.synchronize()
            #expect(await kb.value(forKey: "k") == nil)
            // Once the clock is right the write goes up (stamped again: its first stamp is days ahead).
            offset.value = 0
            #expect(await ka.synchronize())
            #expect(await ka.lastError == nil)
            #expect(await kb.synchronize())
            #expect(await kb.value(forKey: "k") == .string("future"))
            // And later writes from either device win as usual.
            try await kb.set(.string("now"), forKey: "k")
            #expect(await kb.synchronize())
            #expect(await ka.synchronize())
            #expect(await ka.value(forKey: "k") == .string("now"))
        }
    }

    /// The front end beside `ubiq kv set` on the same device: its watch hears that write (as a
    /// local change) and not its own; listeners of the Apple kind still hear neither. The front
    /// end's settings went stale before (only other devices' writes refreshed them).
    @Test func aWatcherHearsOtherProgramsOnThisDeviceButNotItself() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A")
            let ka = try store(a)
            let service = DeviceService(engine: a.engine, kv: ka)
            let plain = await listen(ka)
            let heard = ChangeLog()
            let ready = AsyncStream<Void>.makeStream()
            let watch = Task {
                await service.handle(.kvWatch(local: "front-end")) { r in
                    if r.ready == true { ready.continuation.yield() }
                    if let c = r.kvChange { await heard.note(c) }
                    return true
                }
            }
            defer { watch.cancel() }
            var it = ready.stream.makeAsyncIterator()
            _ = await it.next()
            #expect(await service.handle(.kvSet(values: ["mine": .int(1)], origin: "front-end")).ok)
            #expect(await service.handle(.kvSet(values: ["cli": .string("hello")])).ok)  // `ubiq kv set`
            #expect(await service.handle(.kvSet(values: ["mine": nil])).ok)  // `ubiq kv rm`
            #expect(await eventually { await heard.keys(.localChange) == ["cli", "mine"] })
            let all = await heard.changes
            #expect(all.count == 2 && all.allSatisfy { $0.reason == .localChange }, "\(all)")
            #expect(await plain.changes.isEmpty, "a device's own writes are not external changes")
        }
    }

    /// A device away while another deleted a key and then more keys than the server remembers
    /// deletes of: the server has forgotten that delete, so the device is told to reload and
    /// drops the key (it kept it for ever before), reports it as a server change, and still
    /// sends what it wrote while away.
    @Test func aDeviceThatMissedAForgottenDeleteReloadsAndKeepsItsOwnWrite() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            let ka = try store(a), kb = try store(b)
            try await ka.set(.int(1), forKey: "old")
            #expect(await ka.synchronize())
            #expect(await kb.synchronize())
            #expect(await kb.value(forKey: "old") == .int(1))
            let logB = await listen(kb)
            try await ka.removeValue(forKey: "old")
            for round in 0..<11 {
                for i in 0..<100 { try await ka.set(.int(Int64(i)), forKey: "r\(round)-\(i)") }
                #expect(await ka.synchronize())
                for i in 0..<100 { try await ka.removeValue(forKey: "r\(round)-\(i)") }
                #expect(await ka.synchronize())
            }
            try await kb.set(.string("B's"), forKey: "mine")
            #expect(await kb.synchronize())
            #expect(await kb.value(forKey: "old") == nil, "B kept a key deleted while it was away")
            #expect(await kb.value(forKey: "mine") == .string("B's"))
            #expect(await eventually { await logB.keys(.serverChange).contains("old") })
            #expect(await ka.synchronize())
            #expect(await ka.value(forKey: "mine") == .string("B's"))
        }
    }

    @Test func offlineWritesPersistAndGoUpWhenTheServerIsBack() async throws {
        let dir = try TempDirectory("ubiq-kv-offline")
        defer { dir.remove() }
        var server = try await TestServer.start(directory: dir)
        try await server.user("alice")
        let port = server.port
        let a = try await TestDevice.make(server, user: "alice", name: "A", start: false)
        let b = try await TestDevice.make(server, user: "alice", name: "B", start: false)
        defer { a.remove(); b.remove() }
        await server.stop(keepData: true)
        let ka = try store(a)
        try await ka.set(.string("written offline"), forKey: "note")
        #expect(await ka.synchronize() == false)
        let (onlineA, pendingA) = (await ka.online, await ka.pendingKeys())
        #expect(onlineA == false && pendingA == ["note"])
        // The device restarts while still offline: the write is still there, still pending.
        let ka2 = try store(a)
        let (note2, pending2) = (await ka2.value(forKey: "note"), await ka2.pendingKeys())
        #expect(note2 == .string("written offline") && pending2 == ["note"])
        server = try await TestServer.start(directory: dir, port: port)
        let synced = await ka2.synchronize()
        let why = await ka2.lastError ?? "no error"
        #expect(synced, "\(why)")
        let kb = try store(b)
        #expect(await kb.synchronize())
        #expect(await kb.value(forKey: "note") == .string("written offline"))
        await server.stop()
    }

    @Test func quotaViolationAndAccountChangeAreReported() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            let ka = try store(a), kb = try store(b)
            #expect(await kb.synchronize())
            let logB = await listen(kb)
            // Each write fits on its own; together the store would exceed 1 MB. The later one is refused.
            try await ka.set(.data(Data(count: 600_000)), forKey: "a.blob")
            #expect(await ka.synchronize())
            try await kb.set(.data(Data(count: 600_000)), forKey: "b.blob")
            _ = await kb.synchronize()
            #expect(await eventually { await logB.keys(.quotaViolationChange) == ["b.blob"] })
            let (bBlob, aBlob, pendingB) = (await kb.value(forKey: "b.blob"), await kb.value(forKey: "a.blob"), await kb.pendingKeys())
            #expect(bBlob == nil && aBlob != nil && pendingB.isEmpty)
            // The same home signed in to another account: the old cache is dropped and reported.
            let bobDevice = try await TestDevice.make(fleet.server, user: "bob", name: "bob-laptop", start: false)
            defer { bobDevice.remove() }
            let bobConfig = DeviceConfig(server: b.config.server, user: "bob", deviceID: bobDevice.config.deviceID, deviceName: "B",
                                         container: b.config.container, download: .all, token: bobDevice.config.token)
            let asBob = try SettingsReplica(home: b.home, config: bobConfig)
            let logBob = await listen(asBob)
            #expect(await eventually { await logBob.keys(.accountChange) == ["a.blob"] })
            #expect(await asBob.allEntries().isEmpty)
            #expect(await asBob.synchronize())
            #expect(await asBob.allEntries().isEmpty, "bob sees nothing of alice's store")
        }
    }

    /// A program that starts listening just as the store's first sync lands (a container its
    /// own request added) still hears it, once.
    @Test func aFirstSyncNobodyHeardGoesToTheFirstListener() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            let ka = try store(a), kb = try store(b)
            try await ka.set(.string("dark"), forKey: "theme")
            try await ka.set(.int(12), forKey: "size")
            #expect(await ka.synchronize())
            #expect(await kb.synchronize(), "B's first sync, with nobody listening")
            let first = await listen(kb)
            #expect(await eventually { await first.keys(.initialSyncChange) == ["size", "theme"] })
            let second = await listen(kb)
            try await ka.set(.string("light"), forKey: "theme")
            #expect(await ka.synchronize())
            #expect(await kb.synchronize())
            #expect(await eventually { await second.keys(.serverChange) == ["theme"] })
            #expect(await second.keys(.initialSyncChange).isEmpty, "told once")
            #expect(await first.changes.filter { $0.reason == .initialSyncChange }.count == 1)
        }
    }
}
