import AsyncHTTPClient
import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
@testable import UbiqEngine
import UbiqProtocol
import UbiqTesting

@Suite("Large files, settling, offline", .serialized)
struct RobustnessTests {
    @Test func metadataFirstThenA200MBFile() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            var rng = SeededRandom.forTest("engine.200MB")
            let big = rng.bytes(200 << 20)
            try a.write("Documents/big.bin", bytes: big)
            // B lists the file before its content has finished uploading.
            var sawNotUploaded = false
            let listed = await eventually(timeout: .seconds(60), poll: .milliseconds(5)) {
                let items = await b.engine.listing()
                if let it = items.first(where: { $0.path.string == "Documents/big.bin" }) {
                    if !it.uploaded { sawNotUploaded = true }
                    return true
                }
                return false
            }
            #expect(listed)
            #expect(sawNotUploaded, "B never listed big.bin as not yet uploaded")
            #expect(await eventually(timeout: .seconds(240)) { b.readBytes("Documents/big.bin")?.count == big.count })
            #expect(ContentHash.of(b.readBytes("Documents/big.bin") ?? []) == ContentHash.of(big))
            #expect(await eventually { (await b.engine.listing()).first { $0.path.string == "Documents/big.bin" }?.status == .current })
        }
    }

    @Test func aFileStillBeingWrittenIsNeverCommittedTorn() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            let url = a.url("Documents/log.txt")
            #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
            // The writer runs on its own thread: a busy test process must not pause it for longer
            // than the settle time (a writer that pauses that long has written a stable prefix).
            let passesBefore = await a.engine.passesStarted
            let expected: String = try await withCheckedThrowingContinuation { c in
                Thread {
                    do {
                        let h = try FileHandle(forWritingTo: url)
                        var text = ""
                        for i in 0..<30 {
                            let line = "line \(i) " + String(repeating: "x", count: 2000) + "\n"
                            text += line
                            try h.write(contentsOf: Data(line.utf8))
                            usleep(40_000)
                        }
                        try h.close()
                        c.resume(returning: text)
                    } catch { c.resume(throwing: error) }
                }.start()
            }
            // A file being written asks for one pass, which keeps re-checking it every 200 ms until
            // it settles; 30 writes must not start a pass (and a server round trip) each.
            let passesWhileWriting = await a.engine.passesStarted - passesBefore
            #expect(passesWhileWriting <= 15, "\(passesWhileWriting) passes while one file was written")
            #expect(await eventually { b.read("Documents/log.txt") == expected })
            let client = UbiqAPIClient(baseURL: fleet.server.baseURL, token: a.config.token)
            let item = try #require(try await client.changes(a.config.container, after: 0).items.first { $0.path.string == "Documents/log.txt" })
            let versions = try await client.versions(a.config.container, item: item.id)
            // Only the finished file was ever committed: no torn intermediate versions.
            let all = [versions.current].compactMap { $0 } + versions.others + versions.conflicts
            #expect(all.allSatisfy { $0.hash == Manifest.of(Array(expected.utf8)).hash || $0.size == 0 }, "versions: \(all.map(\.size))")
        }
    }

    /// Stopping does not wait out a request the server never answers (a server stuck behind a
    /// stalled disk held `stop()` for the client's whole 60 s timeout).
    @Test func stopDoesNotWaitForAServerThatNeverAnswers() async throws {
        // A listening socket nobody serves: connections open, requests get no answer.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        #expect(bound)
        let port = Int(UInt16(bigEndian: addr.sin_port))
        let dir = try TempDirectory("ubiq-blackhole")
        defer { dir.remove() }
        let engine = try await Self.engine(in: dir, port: port)
        #expect(await eventually { await engine.passesStarted >= 1 }, "no pass started")
        let t0 = ContinuousClock.now
        await engine.stop()
        let took = ContinuousClock.now - t0
        #expect(took < .seconds(10), "stop took \(took)")
    }

    /// A started engine in `dir` signed in (with a made-up token) to whatever listens on `port`.
    static func engine(in dir: TempDirectory, port: Int) async throws -> SyncEngine {
        let config = DeviceConfig(server: "http://127.0.0.1:\(port)", user: "alice", deviceID: DeviceID(uuid: UUID()), deviceName: "A",
                                  container: DeviceConfig.defaultContainer, download: .all, token: "token")
        let engine = try SyncEngine(home: DeviceHome.rooted(at: dir.url), config: config, settleTime: .milliseconds(200))
        await engine.start()
        return engine
    }

    /// A request's deadline covered only its answer's head: a body that stalled half-way was
    /// waited for for ever (the frozen-database test's device once never stopped, every
    /// thread idle). A client gives up after its read timeout; an engine's stop does not wait.
    @Test func anAnswerThatStallsHalfWayIsGivenUpAndStopDoesNotWaitForIt() async throws {
        let stalling = try StallingServer()
        defer { stalling.stop() }
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: UbiqAPIClient.httpConfiguration(readTimeout: .seconds(2)))
        let client = UbiqAPIClient(baseURL: "http://127.0.0.1:\(stalling.port)", token: "token", http: http)
        let t0 = ContinuousClock.now
        await #expect(throws: ClientError.self) { _ = try await client.changes(DeviceConfig.defaultContainer, after: 0) }
        let took = ContinuousClock.now - t0
        #expect(took < .seconds(20), "a stalled answer was given up after \(took)")
        try await http.shutdown()

        // The engine's own client (read timeout 60 s): its stop cancels the stalled request.
        let dir = try TempDirectory("ubiq-stall")
        defer { dir.remove() }
        let engine = try await Self.engine(in: dir, port: stalling.port)
        #expect(await eventually { stalling.requestsStalled >= 2 }, "the engine's request was not answered half-way")
        let s0 = ContinuousClock.now
        await engine.stop()
        #expect(ContinuousClock.now - s0 < .seconds(10), "stop took \(ContinuousClock.now - s0)")
    }

    @Test func offlineChangesQueueAndGoUpOnReconnect() async throws {
        let fleet = try await serverWithTwoDevices()
        var server = fleet.server
        let (a, b, port) = (fleet.a, fleet.b, server.port)
        defer { a.remove(); b.remove() }
        try a.write("Documents/before.txt", "before")
        #expect(await eventually { b.read("Documents/before.txt") == "before" })

        await server.stop(keepData: true)
        #expect(await eventually { await a.engine.status().state == .offline })
        try a.write("Documents/offline-a.txt", "written while offline")
        try b.write("Documents/offline-b.txt", "also offline")
        try FileManager.default.removeItem(at: a.url("Documents/before.txt"))
        #expect(await eventually { await a.engine.status().state == .offline })
        // #24 defect 11: what was made offline is listed at once (the query, `ubiq ls`, the
        // front end), waiting to go up; it appeared only once the server was back.
        #expect(await eventually {
            await a.engine.listing().contains { $0.path.string == "Documents/offline-a.txt" && !$0.uploaded && $0.status == .current }
        }, "a file made offline is not listed while the server is down")

        server = try await TestServer.start(directory: server.directory, port: port)
        #expect(await eventually(timeout: .seconds(60)) {
            a.read("Documents/offline-b.txt") == "also offline" && b.read("Documents/offline-a.txt") == "written while offline"
                && !b.exists("Documents/before.txt")
        }, "\(describeDiff(a, b))")
        #expect(await eventually { await a.engine.status().state == .online })
        await a.stop(); await b.stop()
        await server.stop()
    }

    @Test func restartCatchesUpWithChangesMadeWhileStopped() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/one.txt", "1")
            #expect(await eventually { b.read("Documents/one.txt") == "1" })
            await b.stop()
            try b.write("Documents/while-stopped.txt", "made while B's engine was not running")
            try b.write("Documents/one.txt", "1 edited while stopped")
            try a.write("Documents/two.txt", "2")
            try await b.restart()
            #expect(await eventually { a.read("Documents/while-stopped.txt") != nil && a.read("Documents/one.txt") == "1 edited while stopped" && b.read("Documents/two.txt") == "2" },
                    "\(describeDiff(a, b))")
        }
    }

    @Test func aDownloadNeverOverwritesALocalEdit() async throws {
        try await withFleet { fleet in
            let a = try await fleet.device("A"), b = try await fleet.device("B")
            try a.write("Documents/shared.txt", "v1")
            #expect(await eventually { b.read("Documents/shared.txt") == "v1" })
            // B stops syncing; both edit the same file; B comes back.
            await b.stop()
            try a.write("Documents/shared.txt", "A's edit")
            let client = UbiqAPIClient(baseURL: fleet.server.baseURL, token: a.config.token)
            #expect(await eventually {
                let items = (try? await client.changes(a.config.container, after: 0).items) ?? []
                return items.first { $0.path.string == "Documents/shared.txt" }?.current?.hash == Manifest.of(Array("A's edit".utf8)).hash
            })
            try b.write("Documents/shared.txt", "B's edit")
            try await b.restart()
            // The server keeps A's (first) edit current and B's as a conflict version: nothing lost.
            #expect(await eventually { b.read("Documents/shared.txt") == "A's edit" })
            let item = try #require(try await client.changes(a.config.container, after: 0).items.first { $0.path.string == "Documents/shared.txt" })
            #expect(item.conflictCount == 1)
            let v = try await client.versions(a.config.container, item: item.id)
            #expect(v.conflicts.first?.hash == Manifest.of(Array("B's edit".utf8)).hash)
            #expect(await eventually {
                let s = await b.engine.status()
                return s.conflicts == 1 && s.idle
            })
        }
    }
}
