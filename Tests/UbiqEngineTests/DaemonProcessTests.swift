import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine
import UbiqProtocol
import UbiqTesting
#if canImport(Glibc)
import Glibc
#endif

extension ProcessBoundTests {
    /// The real binary: `ubiq server`, `ubiq login`, `ubiq daemon`, `ubiq sync`, `ubiq status`,
    /// with processes killed by SIGKILL at the worst moments.
    @Suite("Daemons and kill -9", .serialized)
    struct DaemonProcessTests {
        final class Setup: @unchecked Sendable {
            let dir: TempDirectory
            var server: ChildProcess
            var port: Int
            var daemons: [String: ChildProcess] = [:]
            let data: String
            /// The devices reach the server through it (its port survives a server restart, which
            /// keeps the port), so a test can hold their bandwidth low.
            var proxy: LoopbackProxy!

            init() throws {
                dir = try TempDirectory("ubiq-daemons")
                data = dir.url.appendingPathComponent("server").path
                let (s, _, e) = try ChildProcess.runUbiq(["server", "user", "add", "alice", "--password-stdin", "--data", data], stdin: "pw\n")
                guard s == 0 else { throw CoreError(.internalError, "user add failed: \(e)") }
                (server, port) = try Self.startServer(data: data, port: 0)
                proxy = LoopbackProxy(target: port)
                try proxy.start()
            }

            static func startServer(data: String, port: Int) throws -> (ChildProcess, Int) {
                try ChildProcess.startUbiqServer(data: data, port: port)
            }

            func restartServer() throws {
                server.signal(SIGKILL)
                server.wait()
                (server, port) = try Self.startServer(data: data, port: port)
            }

            func home(_ name: String) -> String { dir.url.appendingPathComponent("home-\(name)").path }
            func folder(_ name: String) -> URL { URL(fileURLWithPath: home(name)).appendingPathComponent("Ubiquity/iCloud.default") }
            var url: String { "http://127.0.0.1:\(port)" }

            func login(_ name: String) throws {
                let (s, out, e) = try ChildProcess.runUbiq(["login", proxy.url, "--user", "alice", "--password-stdin", "--device", name, "--home", home(name)], stdin: "pw\n")
                guard s == 0 else { throw CoreError(.internalError, "login failed: \(e)") }
                #expect(out.contains("signed in"))
            }

            func startDaemon(_ name: String) throws {
                let p = try ChildProcess(ChildProcess.ubiqBinary(), ["daemon", "--home", home(name)])
                guard p.waitForOutput(timeout: 60, { $0.contains("syncing") }) != nil else { throw CoreError(.internalError, "daemon \(name) did not start: \(p.stderr)") }
                daemons[name] = p
            }

            func kill(_ name: String) {
                daemons[name]?.signal(SIGKILL)
                daemons[name]?.wait()
                daemons[name] = nil
            }

            func client() async throws -> UbiqAPIClient {
                try await UbiqAPIClient(baseURL: url).login(user: "alice", password: "pw", deviceName: "observer").0
            }

            func teardown() {
                for (_, d) in daemons { d.signal(SIGTERM); d.wait(timeout: 10) }
                server.signal(SIGTERM)
                server.wait(timeout: 10)
                proxy.stop()
                dir.remove()
            }
        }

        static let container = try! ContainerID(validating: "iCloud.default")

        /// Starts a thread that SIGKILLs `pid` the moment `condition` holds (checked every
        /// millisecond, for at most `timeout` seconds); true if it did. It needs no turn on the
        /// test's task pool, which a busy test run may not give before a transfer has ended.
        func kill(_ pid: pid_t, timeout: TimeInterval = 180, when condition: @escaping @Sendable () -> Bool) async -> Bool {
            (try? await offThePool {
                let deadline = Date().addingTimeInterval(timeout)
                while Date() < deadline {
                    if condition() { Glibc.kill(pid, SIGKILL); return true }
                    usleep(1000)
                }
                return false
            }) ?? false
        }

        /// The server's record of `big.bin`, if it lists it.
        func bigFile(_ obs: UbiqAPIClient) async -> ItemRecord? {
            (try? await obs.changes(Self.container, after: 0).items.first { $0.path.string == "Documents/big.bin" }).flatMap { $0 }
        }

        /// A command run a moment after `ubiq daemon` started (a service start followed by a
        /// command) waits for the daemon's socket instead of failing.
        @Test func aCommandRightAfterTheDaemonStartsWaitsForIt() async throws {
            let s = try Setup()
            defer { s.teardown() }
            try s.login("A")
            for round in 0..<3 {
                let p = try ChildProcess(ChildProcess.ubiqBinary(), ["daemon", "--home", s.home("A")])
                let (status, out, err) = try ChildProcess.runUbiq(["status", "--json", "--home", s.home("A")], timeout: 60)
                #expect(status == 0 && out.contains("\"state\""), "round \(round): \(status) \(err)")
                #expect(!err.contains("does not answer"))
                p.signal(SIGTERM)
                p.wait(timeout: 10)
            }
        }

        @Test func daemonKilledMidUploadAndMidDownloadLosesNothing() async throws {
            let s = try Setup()
            defer { s.teardown() }
            // The devices' bandwidth is held to 4 MiB/s each way, so both transfers of this 24 MiB
            // file are in flight for seconds whatever the machine's speed (a big file on a fast
            // machine was the old way; it loaded a slow disk enough to stall whole test runs).
            s.proxy.limit(up: 4 << 20, down: 4 << 20)
            try s.login("A"); try s.login("B")
            try s.startDaemon("A"); try s.startDaemon("B")
            let obs = try await s.client()
            var rng = SeededRandom.forTest("daemon.kill")
            let big = rng.bytes(24 << 20)
            s.proxy.reset()
            try Data(big).write(to: s.folder("A").appendingPathComponent("Documents/big.bin"))
            // Kill A once 4 MiB of content went up: the server lists the file (metadata first),
            // its content not all there.
            let proxy = s.proxy!
            let midUpload = await kill(s.daemons["A"]!.pid) { proxy.bytes.up > 4 << 20 }
            #expect(midUpload, "never saw the upload in progress")
            s.kill("A")
            #expect(await bigFile(obs)?.current?.uploaded == false, "listed, not uploaded")
            // B (perhaps streaming the download meanwhile) is stopped while A finishes the upload.
            s.kill("B")
            s.proxy.limit(up: nil, down: 4 << 20)
            try s.startDaemon("A")
            #expect(await eventually(timeout: .seconds(180)) { await bigFile(obs)?.current?.uploaded == true },
                    "A never finished the upload after its restart")
            // Kill B while its download is writing the partial file: a thread of its own watches
            // the partial folder from B's start and kills B the moment a partial file grows
            // (one left by the streaming above counts from the size it had then).
            let partials = s.folder("B").deletingLastPathComponent().appendingPathComponent(".iCloud.default.partial")
            @Sendable func partialSizes() -> [String: Int] {
                var out: [String: Int] = [:]
                for n in (try? FileManager.default.contentsOfDirectory(atPath: partials.path)) ?? [] {
                    var st = stat()
                    if stat(partials.appendingPathComponent(n).path, &st) == 0 { out[n] = Int(st.st_size) }
                }
                return out
            }
            let before = partialSizes()
            let daemonB = try ChildProcess(ChildProcess.ubiqBinary(), ["daemon", "--home", s.home("B")])
            s.daemons["B"] = daemonB
            let midDownload = await kill(daemonB.pid) { partialSizes().contains { $0.value > (before[$0.key] ?? 0) } }
            #expect(midDownload, "never saw the download in progress")
            s.kill("B")
            // The target is never a torn file.
            let target = s.folder("B").appendingPathComponent("Documents/big.bin")
            if let partial = try? Data(contentsOf: target) { #expect(partial.count == big.count) }
            s.proxy.limit(up: nil, down: nil)
            try s.startDaemon("B")
            #expect(await eventually(timeout: .seconds(240)) { (try? Data(contentsOf: target))?.count == big.count })
            #expect(ContentHash.of([UInt8]((try? Data(contentsOf: target)) ?? Data())) == ContentHash.of(big))

            // `ubiq sync` and `ubiq status` talk to the running daemon.
            let (st, out, err) = try ChildProcess.runUbiq(["sync", "--home", s.home("B")])
            #expect(st == 0, "\(out) \(err)")
            let (st2, json, _) = try ChildProcess.runUbiq(["status", "--json", "--home", s.home("B")])
            #expect(st2 == 0)
            let status = try JSONDecoder().decode(EngineStatus.self, from: Data(json.utf8))
            #expect(status.state == .online && status.idle && status.device == "B" && status.conflicts == 0)
            // A second engine on the same home is refused.
            let (st3, _, err3) = try ChildProcess.runUbiq(["daemon", "--home", s.home("B")])
            #expect(st3 == 1 && err3.contains("already running"))
        }

        @Test func serverKilledMidTransferThenRestarted() async throws {
            let s = try Setup()
            defer { s.teardown() }
            s.proxy.limit(up: 4 << 20, down: nil)  // the upload is in flight for seconds
            try s.login("A"); try s.login("B")
            try s.startDaemon("A"); try s.startDaemon("B")
            var rng = SeededRandom.forTest("server.kill")
            let big = rng.bytes(16 << 20)
            s.proxy.reset()
            try Data(big).write(to: s.folder("A").appendingPathComponent("Documents/big.bin"))
            let proxy = s.proxy!
            let mid = await kill(s.server.pid) { proxy.bytes.up > 4 << 20 }
            #expect(mid, "never saw the upload in progress")
            try s.restartServer()
            s.proxy.limit(up: nil, down: nil)
            // Meanwhile, more changes on both sides.
            try Data("small".utf8).write(to: s.folder("B").appendingPathComponent("Documents/from-b.txt"))
            let target = s.folder("B").appendingPathComponent("Documents/big.bin")
            #expect(await eventually(timeout: .seconds(240)) { (try? Data(contentsOf: target))?.count == big.count })
            #expect(ContentHash.of([UInt8]((try? Data(contentsOf: target)) ?? Data())) == ContentHash.of(big))
            #expect(await eventually { FileManager.default.fileExists(atPath: s.folder("A").appendingPathComponent("Documents/from-b.txt").path) })
        }

        @Test func commandLineDeviceFlow() async throws {
            let s = try Setup()
            defer { s.teardown() }
            // Signed out.
            var (st, out, err) = try ChildProcess.runUbiq(["status", "--json", "--home", s.home("C")])
            #expect(st == 0 && out.contains("\"signedOut\""))
            (st, _, err) = try ChildProcess.runUbiq(["sync", "--home", s.home("C")])
            #expect(st == 1 && err.contains("not signed in"))
            // Wrong password, bad URL.
            (st, _, err) = try ChildProcess.runUbiq(["login", s.url, "--user", "alice", "--password-stdin", "--home", s.home("C")], stdin: "nope\n")
            #expect(st == 1 && err.contains("wrong user name or password"))
            (st, _, _) = try ChildProcess.runUbiq(["login", "not a url", "--user", "alice", "--home", s.home("C")])
            #expect(st == 2)
            (st, _, err) = try ChildProcess.runUbiq(["login", "http://127.0.0.1:1", "--user", "alice", "--password-stdin", "--home", s.home("C")], stdin: "pw\n")
            #expect(st == 1 && err.contains("cannot reach"))
            // One-shot sync without a daemon.
            try s.login("C"); try s.login("D")
            try Data("one shot".utf8).write(to: s.folder("C").appendingPathComponent("Documents/c.txt"))
            (st, out, err) = try ChildProcess.runUbiq(["sync", "--home", s.home("C")])
            #expect(st == 0 && out.contains("in sync"), "\(err)")
            (st, out, err) = try ChildProcess.runUbiq(["sync", "--home", s.home("D")])
            #expect(st == 0, "\(err)")
            #expect((try? String(contentsOf: s.folder("D").appendingPathComponent("Documents/c.txt"), encoding: .utf8)) == "one shot")
            // Logout refuses while a change is not uploaded, --force rescues it first.
            try Data("unsent".utf8).write(to: s.folder("D").appendingPathComponent("Documents/unsent.txt"))
            (st, _, err) = try ChildProcess.runUbiq(["logout", "--home", s.home("D")])
            #expect(st == 1 && err.contains("not uploaded"))
            (st, out, err) = try ChildProcess.runUbiq(["logout", "--force", "--home", s.home("D")])
            #expect(st == 0 && out.contains("copied to"), "\(err)")
            let rescued = out.split(separator: "\n").first { $0.contains("copied to ") }.flatMap { l in l.range(of: "copied to ").map { String(l[$0.upperBound...]) } }
            #expect(rescued.map { (try? String(contentsOfFile: $0 + "/Documents/unsent.txt", encoding: .utf8)) == "unsent" } ?? false)
            (st, out, _) = try ChildProcess.runUbiq(["status", "--json", "--home", s.home("D")])
            #expect(out.contains("\"signedOut\""))
            // With the server down, sync fails with one clear line.
            s.server.signal(SIGKILL); s.server.wait()
            (st, _, err) = try ChildProcess.runUbiq(["sync", "--home", s.home("C")])
            #expect(st == 1 && err.hasPrefix("ubiq: offline"), "\(err)")
            try s.restartServer()
        }
    }
}
