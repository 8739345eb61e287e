import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqServer
import UbiqTesting

/// Two servers on one PostgreSQL database (a private one, so it can be stopped) and one bucket,
/// a device on each writing files without pause; PostgreSQL is stopped twice under that load —
/// once as a crash leaves it (immediate: recovery from the log), once cleanly — and started
/// again. While it is down the servers answer with a clear error (never hang, never exit); once
/// it is back they reconnect by themselves and the devices catch up: every file either device
/// wrote is on both, byte for byte, the server lists each one, a new file crosses from one
/// server to the other, and a new device can sign in on both.
@Suite("PostgreSQL restarted under load", .enabled(if: S3TestStore.runs && PrivatePostgres.runs), .serialized, .ownThreads, .timeLimit(.minutes(5)))
struct DatabaseRestartTests {
    /// Files a device writes until told to stop: path → content.
    actor Writer {
        private(set) var written: [String: [UInt8]] = [:]
        private var stopped = false
        func stop() { stopped = true }
        var isStopped: Bool { stopped }
        func record(_ path: String, _ bytes: [UInt8]) { written[path] = bytes }

        /// Writes a new file (1 in 5 rewrites an older one) every `pause` until stopped.
        func run(_ device: TestDevice, prefix: String, seed: String, pause: Duration = .milliseconds(40)) async throws {
            var rng = SeededRandom.forTest(seed)
            var i = 0
            while !stopped {
                let rewrite = i > 3 && Int.random(in: 0..<5, using: &rng) == 0
                let path = "Documents/\(prefix)/f\(rewrite ? Int.random(in: 0..<i, using: &rng) : i).bin"
                let bytes = rng.bytes(Int.random(in: 1...60_000, using: &rng))
                try device.write(path, bytes: bytes)
                written[path] = bytes
                if !rewrite { i += 1 }
                try await Task.sleep(for: pause)
            }
        }
    }

    @Test func serversReconnectAndDevicesCatchUpAfterPostgreSQLRestarts() async throws {
        guard let pg = try PrivatePostgres.start() else { return }
        defer { pg.destroy() }
        let database = MetadataLocation.postgres(try pg.location)
        let blobs = StoreKind.s3.blobs
        let one = try await TestServer.start(database: database, blobs: blobs)
        let two = try await TestServer.start(database: database, blobs: blobs)
        try await one.user("alice")
        let a = try await TestDevice.make(one, user: "alice", name: "A")
        let b = try await TestDevice.make(two, user: "alice", name: "B")
        let (probe, _) = try await two.device("alice", name: "probe")

        try a.write("Documents/before.txt", "before the restarts")
        #expect(await eventually { b.read("Documents/before.txt") == "before the restarts" })

        let wa = Writer(), wb = Writer()
        let load = Task {
            async let x: Void = wa.run(a, prefix: "a", seed: "pg-restart.a")
            async let y: Void = wb.run(b, prefix: "b", seed: "pg-restart.b")
            _ = try await (x, y)
        }
        var outageErrors: [String] = []
        for how in [PrivatePostgres.Shutdown.immediate, .fast] {
            try await Task.sleep(for: .milliseconds(1500))  // load before the stop
            pg.stopServer(how)
            // Down: a request is answered with a clear error, in bounded time.
            let t0 = ContinuousClock.now
            do {
                _ = try await probe.account()
                Issue.record("the account was read with the database down (\(how))")
            } catch let e as ClientError {
                outageErrors.append("\(e)")
                #expect(e.code == .storageFailure, "\(how): \(e)")
            }
            #expect(ContinuousClock.now - t0 < .seconds(30), "\(how): answered in \(ContinuousClock.now - t0)")
            try await Task.sleep(for: .seconds(2))  // the devices keep writing against a server without its database
            try pg.startServer()
            print("[pg-restart] after the \(how) stop: \(pg.state.prefix(200))")
        }
        try await Task.sleep(for: .milliseconds(1500))
        await wa.stop()
        await wb.stop()
        try await load.value
        let expected = (await wa.written).merging(await wb.written) { x, _ in x }
        print("[pg-restart] \(expected.count) files written by A and B; errors while down: \(outageErrors)")
        let arrived = await eventually(timeout: .seconds(120)) {
            expected.allSatisfy { a.readBytes($0.key) == $0.value && b.readBytes($0.key) == $0.value }
        }
        let missing = expected.filter { a.readBytes($0.key) != $0.value || b.readBytes($0.key) != $0.value }.keys.sorted()
        #expect(arrived, "\(missing.count) of \(expected.count) file(s) not on both: \(missing.prefix(10)); \(describeDiff(a, b)); \(pg.state)")
        #expect(await converge(a, b), "\(describeDiff(a, b))")
        let clear = await eventually(timeout: .seconds(60)) { let ea = await a.engine.status().errors, eb = await b.engine.status().errors; return ea.isEmpty && eb.isEmpty }
        let left = (await a.engine.status().errors) + (await b.engine.status().errors)
        #expect(clear, "errors left: \(left); \(pg.state)")

        // The server lists every file at the size written (nothing acknowledged was lost).
        var listed: [String: Int] = [:]
        var after: Int64 = 0
        while true {
            let page = try await probe.changes(a.config.container, after: after)
            for item in page.items where !item.isDeleted { listed[item.path.string] = item.current?.size }
            after = page.cursor
            if !page.hasMore { break }
        }
        for (path, bytes) in expected { #expect(listed[path] == bytes.count, "\(path): server lists \(listed[path].map(String.init) ?? "nothing")") }

        // A new file crosses from server one to server two; new devices sign in on both.
        try a.write("Documents/after.txt", "after the restarts")
        #expect(await eventually(timeout: .seconds(60)) { b.read("Documents/after.txt") == "after the restarts" })
        #expect(try await one.device("alice", name: "new-one").0.account().used > 0)
        #expect(try await two.device("alice", name: "new-two").0.account().used > 0)

        await a.stop(); a.remove()
        await b.stop(); b.remove()
        await one.stop(keepData: true); one.directory.remove()
        await two.stop(keepData: true); two.directory.remove()
    }
}
