import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqServer
import UbiqStorage
import UbiqTesting

@Suite("Fleet failures", .enabled(if: S3TestStore.runs && PostgresTestDatabase.runs), .serialized, .ownThreads)
struct FleetFailureTests {}

extension FleetFailureTests {
    /// Two `ubiq server` processes on one database and bucket; one is killed with SIGKILL while a
    /// device commits through it: everything it acknowledged is there through the other, which
    /// keeps serving (the device's token works there as it is).
    @Test func oneServerKilledMidCommitTheOtherKeepsServingAndLosesNothing() async throws {
        guard S3TestStore.runs, let s3 = S3TestStore.store else { return }
        let dir = try TempDirectory("ubiq-fleet-kill")
        defer { dir.remove() }
        guard let pg = try await PostgresTestDatabase.fresh() else { return }
        defer { Task { await PostgresTestDatabase.drop(pg) } }
        let database = "postgres://\(pg.user):\(pg.password ?? "")@\(pg.host):\(pg.port)/\(pg.database)"
        let blobs = "s3://ubiq-test-\(UUID().uuidString.prefix(13).lowercased())?endpoint=\(s3.endpoint)&region=\(S3TestStore.env["AWS_DEFAULT_REGION"] ?? "us-east-1")"
        let shared = ["--database", database, "--blobs", blobs, "--key-file", dir.url.appendingPathComponent("server.key").path]
        let (status, _, err) = try ChildProcess.runUbiq(["server", "user", "add", "alice", "--password-stdin", "--data", dir.url.appendingPathComponent("one").path] + shared,
                                                        stdin: "pw-alice\n")
        #expect(status == 0, "\(err)")
        func start(_ name: String) throws -> (ChildProcess, String) {
            let p = try ChildProcess(ChildProcess.ubiqBinary(), ["server", "--data", dir.url.appendingPathComponent(name).path, "--listen", "127.0.0.1:0",
                                                                 "--log-level", "error"] + shared)
            guard let out = p.waitForOutput(timeout: 60, { $0.contains("listening on") }),
                  let line = out.split(separator: "\n").first(where: { $0.contains("listening on") }),
                  let url = line.split(separator: " ").first(where: { $0.hasPrefix("http://") }) else {
                p.signal(SIGKILL); p.wait()
                throw CoreError(.internalError, "server \(name) did not start: \(p.stderr)")
            }
            return (p, String(url))
        }
        let (one, urlOne) = try start("one")
        let (two, urlTwo) = try start("two")
        defer { two.signal(SIGTERM); two.wait() }
        let (c1, _) = try await UbiqAPIClient(baseURL: urlOne).login(user: "alice", password: "pw-alice", deviceName: "laptop")
        let c2 = UbiqAPIClient(baseURL: urlTwo, token: c1.token)
        var rng = SeededRandom.forTest("fleet.kill")
        var acknowledged: [(ItemID, VersionID, [UInt8])] = []
        var killed = false
        for i in 0..<60 {
            if i == 25 {
                // Killed while the next commits are on their way.
                let victim = one
                Task.detached { try? await Task.sleep(for: .milliseconds(Int.random(in: 1...40))); victim.signal(SIGKILL) }
                killed = true
            }
            let bytes = rng.bytes(Int.random(in: 10...200_000, using: &rng))
            do {
                let r = try await commitFile(c1, "Documents/f\(i).bin", bytes: bytes)
                acknowledged.append((r.item.id, try #require(r.version?.id), bytes))
            } catch {
                if killed { break } else { throw error }
            }
        }
        #expect(one.wait() == 128 + SIGKILL)
        #expect(acknowledged.count >= 25)
        let page = try await c2.changes(notes, after: 0)
        for (id, v, bytes) in acknowledged {
            #expect(page.items.first { $0.id == id }?.current?.id == v)
            #expect(try await downloadBytes(c2, version: v) == bytes)
        }
        // The other server goes on: a commit through it, and a new login.
        _ = try await commitFile(c2, "Documents/after.txt", "after the kill")
        #expect(try await UbiqAPIClient(baseURL: urlTwo).login(user: "alice", password: "pw-alice", deviceName: "phone").1.user == "alice")
    }
}
