import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqStorage
import UbiqTesting

/// The real `ubiq` binary as a person runs it.
@Suite("ubiq server process", .serialized, .ownThreads)
struct ProcessTests {
    /// Starts `ubiq server` on a free port (with `extra` options) and returns it with its URL.
    func startServer(_ data: String, _ extra: [String] = [], environment: [String: String]? = nil) throws -> (ChildProcess, String) {
        let p = try ChildProcess(ChildProcess.ubiqBinary(), ["server", "--data", data, "--listen", "127.0.0.1:0"] + extra, environment: environment)
        guard let out = p.waitForOutput(timeout: 60, { $0.contains("listening on") }),
              let line = out.split(separator: "\n").first(where: { $0.contains("listening on") }),
              let url = line.split(separator: " ").first(where: { $0.hasPrefix("http://") || $0.hasPrefix("https://") }) else {
            p.signal(SIGKILL)
            p.wait()
            throw CoreError(.internalError, "server did not start: \(p.stderr)")
        }
        return (p, String(url))
    }

    /// The metadata options of a server on a database of `kind` (a fresh PostgreSQL database
    /// named without its password, which comes from `UBIQ_DATABASE_PASSWORD`, as an
    /// administrator would keep it out of the process list), the environment to run it with,
    /// and the database to drop at the end.
    func database(_ kind: DatabaseKind) async throws -> ([String], [String: String], PostgreSQLLocation?)? {
        guard let location = try await kind.fresh() else { return nil }
        guard case .postgres(var pg) = location else { return ([], ProcessInfo.processInfo.environment, nil) }
        var env = ProcessInfo.processInfo.environment
        env["UBIQ_DATABASE_PASSWORD"] = pg.password
        let dropAt = pg
        pg.password = nil
        return (["--database", "postgres://\(pg.user)@\(pg.host):\(pg.port)/\(pg.database)"], env, dropAt)
    }

    @Test(arguments: DatabaseKind.available) func serverKilledWithSIGKILLKeepsEverythingOnRestart(_ kind: DatabaseKind) async throws {
        let dir = try TempDirectory("ubiq-kill")
        defer { dir.remove() }
        guard let (dbArgs, env, dropAt) = try await database(kind) else { return }
        defer { if let dropAt { Task { await PostgresTestDatabase.drop(dropAt) } } }
        let data = dir.url.appendingPathComponent("data").path
        let (status, out, err) = try ChildProcess.runUbiq(["server", "user", "add", "alice", "--password-stdin", "--data", data] + dbArgs,
                                                          stdin: "pw-alice\n", environment: env)
        #expect(status == 0, "\(err)")
        #expect(out.contains("created user alice"))

        var (server, url) = try startServer(data, dbArgs, environment: env)
        let (c, _) = try await UbiqAPIClient(baseURL: url).login(user: "alice", password: "pw-alice", deviceName: "laptop")
        var rng = SeededRandom.forTest("process.kill")
        var committed: [(ItemID, [UInt8])] = []
        for i in 0..<20 {
            let bytes = rng.bytes(Int.random(in: 1...150_000, using: &rng))
            committed.append((try await commitFile(c, "Documents/f\(i).bin", bytes: bytes).item.id, bytes))
        }
        let kvDevice = try await c.account().device
        _ = try await c.kvSet(notes, [KVEntry(key: "k", value: .string("v"), stamp: HLCTimestamp(wallMillis: 5, counter: 0), device: kvDevice)])
        server.signal(SIGKILL)
        #expect(server.wait() == 128 + SIGKILL)

        (server, url) = try startServer(data, dbArgs, environment: env)
        defer { server.signal(SIGTERM); server.wait() }
        let c2 = UbiqAPIClient(baseURL: url, token: c.token)
        let page = try await c2.changes(notes, after: 0)
        #expect(page.items.count == 20)
        for (id, bytes) in committed {
            let item = try #require(page.items.first { $0.id == id })
            #expect(item.current?.uploaded == true)
            let m = try await c2.manifest(notes, version: item.current!.id)
            var got: [UInt8] = []
            for ch in m.chunks { got += try await c2.downloadChunk(ch.hash) }
            #expect(got == bytes)
        }
        #expect(try await c2.kvAll(notes).entries.map(\.value) == [.string("v")])
    }

    /// #42: the default cap on connections comes from the open-file limit (its hard value less
    /// 256 for the server's own files, at least 64, at most 65,536), and `--help` says what it
    /// is on the machine — here under limits set with `prlimit` (lowered only: raising a hard
    /// limit takes privileges a test run may not have).
    @Test(arguments: [(512, 256), (200, 64), (4_096, 3_840)])
    func theConnectionCapIsSizedFromTheOpenFileLimit(_ limit: Int, _ cap: Int) throws {
        let p = try ChildProcess("/usr/bin/prlimit", ["--nofile=\(limit):\(limit)", ChildProcess.ubiqBinary(), "server", "run", "--help"])
        let status = p.wait(timeout: 60)
        let help = p.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(status == 0, "\(p.stderr)")
        #expect(help.contains("\(cap) on this machine"), "\(help)")
    }

    /// SIGTERM stops a server cleanly; while one runs, a second server on the same data folder
    /// is refused with one clear line (accounts can still be added), and once it has stopped
    /// the folder is free again. (After a SIGKILL it is free too: see the restart above.)
    @Test func sigtermStopsTheServerCleanlyAndOneServerHoldsADataFolder() async throws {
        let dir = try TempDirectory("ubiq-term")
        defer { dir.remove() }
        let data = dir.url.appendingPathComponent("d").path
        let (server, url) = try startServer(data)
        let (s, _) = try await UbiqAPIClient(baseURL: url).raw(.GET, "/v1/health", body: nil)
        #expect(s == 200)
        var (status, _, err) = try ChildProcess.runUbiq(["server", "--data", data, "--listen", "127.0.0.1:0"])
        #expect(status == 1 && err.contains("another ubiq server is already using") && err.split(separator: "\n").count == 1, "\(err)")
        (status, _, err) = try ChildProcess.runUbiq(["server", "user", "add", "bob", "--password-stdin", "--data", data], stdin: "pw-bob\n")
        #expect(status == 0, "\(err)")
        #expect(try await UbiqAPIClient(baseURL: url).login(user: "bob", password: "pw-bob", deviceName: "laptop").0.token?.isEmpty == false)
        server.signal(SIGTERM)
        #expect(server.wait(timeout: 30) == 0)
        // A pack and a temporary file left by a write that was cut off go when a server starts.
        let orphans = ["chunks/packs/\(UUID().uuidString.lowercased()).pack", "chunks/tmp/partial.1"].map { data + "/" + $0 }
        for path in orphans { try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: path)) }
        let (again, _) = try startServer(data)
        // Gone, and said so (the line comes after the removal: a stop in between cut it off).
        let gone = again.waitForOutput(timeout: 30) { _ in
            orphans.allSatisfy { !FileManager.default.fileExists(atPath: $0) } && again.stderr.contains("removed 2 files")
        }
        again.signal(SIGTERM)
        #expect(again.wait(timeout: 30) == 0)
        #expect(gone != nil, "left: \(orphans.filter { FileManager.default.fileExists(atPath: $0) })")
        #expect(again.stderr.contains("removed 2 files, 8.0 KiB"), "\(again.stderr)")
    }

    /// #39 §1 as an operator runs it: the first command makes the key file (0600) and says
    /// nothing is waiting; `key rotate` puts a new key in front and a pass is due; the server's
    /// next start seals what the old key sealed again (said in its log), and then none is due.
    @Test func theServerKeyIsMadeShownAndRotated() async throws {
        let dir = try TempDirectory("ubiq-key")
        defer { dir.remove() }
        let data = dir.url.appendingPathComponent("d").path
        var (status, _, err) = try ChildProcess.runUbiq(["server", "user", "add", "bob", "--password-stdin", "--data", data], stdin: "pw-bob\n")
        #expect(status == 0, "\(err)")
        func show() throws -> [String: Any] {
            let (st, out, e) = try ChildProcess.runUbiq(["server", "key", "show", "--json", "--data", data])
            #expect(st == 0, "\(e)")
            return (try? JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]) ?? [:]
        }
        let first = try show()
        #expect(first["file"] as? String == data + "/server.key" && (first["older"] as? [String])?.isEmpty == true, "\(first)")
        #expect(first["resealDue"] as? Bool == false, "a new store has nothing from before sealing")
        // A chunk sealed with the first key.
        let (server, url) = try startServer(data)
        var bob = UbiqAPIClient(baseURL: url)
        bob.token = try await bob.login(user: "bob", password: "pw-bob", deviceName: "laptop").0.token
        _ = try await upload(bob, Array("CANARY-rotate ".utf8) + Array(repeating: 9, count: 5_000))
        // The first start's pass (a store from before sealing may hold plaintext) has run.
        let converted = await eventually { (try? show()["resealDue"] as? Bool) == false }
        server.signal(SIGTERM)
        #expect(server.wait(timeout: 30) == 0)
        #expect(converted, "\(server.stderr)")
        var out: String
        (status, out, err) = try ChildProcess.runUbiq(["server", "key", "rotate", "--data", data])
        #expect(status == 0 && out.contains("now seals with key"), "\(out)\(err)")
        let rotated = try show()
        #expect(rotated["current"] as? String != first["current"] as? String && (rotated["older"] as? [String]) == [first["current"] as? String ?? "-"], "\(rotated)")
        #expect(rotated["resealDue"] as? Bool == true)
        let (again, _) = try startServer(data)
        let said = again.waitForOutput(timeout: 60) { _ in again.stderr.contains("sealed 1 chunk again") }
        again.signal(SIGTERM)
        #expect(again.wait(timeout: 30) == 0)
        #expect(said != nil, "\(again.stderr)")
        #expect(try show()["resealDue"] as? Bool == false)
    }

    /// #45 §3: with `--database` and `--blobs` both remote, a second `ubiq server` on the same
    /// machine stopped with "another ubiq server is already using …" although nothing in the
    /// data folder is shared. Two now run on one folder, and each serves the same accounts.
    @Test func twoServersWithRemoteStoresShareADataFolder() async throws {
        guard PostgresTestDatabase.runs && S3TestStore.runs else { return }
        guard let (options, env, dropAt) = try await database(.postgres), let s3 = S3TestStore.store else { return }
        let dir = try TempDirectory("ubiq-fleet-data")
        defer { dir.remove() }
        let data = dir.url.appendingPathComponent("d").path
        let bucket = "ubiq-test-\(UUID().uuidString.prefix(13).lowercased())"
        let remote = options + ["--blobs", "s3://\(bucket)?endpoint=\(s3.endpoint)"]
        let (added, _, why) = try ChildProcess.runUbiq(["server", "user", "add", "bob", "--password-stdin", "--data", data] + remote, stdin: "pw-bob\n", environment: env)
        #expect(added == 0, "\(why)")
        let (a, urlA) = try startServer(data, remote, environment: env)
        let (b, urlB) = try startServer(data, remote, environment: env)
        for url in [urlA, urlB] {
            #expect(try await UbiqAPIClient(baseURL: url).login(user: "bob", password: "pw-bob", deviceName: "laptop").0.token?.isEmpty == false, "\(url)")
        }
        #expect(!FileManager.default.fileExists(atPath: data + "/admin.json"), "no admin access file to fight over")
        for p in [a, b] { p.signal(SIGTERM); #expect(p.wait(timeout: 30) == 0) }
        if let dropAt { await PostgresTestDatabase.drop(dropAt) }
    }

    /// #23 row 6: the server's database (password and token hashes, every path), chunk files
    /// and packs were 0644 in 0755 folders. Now the data folder is 0700 (made so if it was
    /// not) and everything the server writes is its user's alone, whatever the umask.
    @Test func theServersDataIsItsUsersAlone() async throws {
        let dir = try TempDirectory("ubiq-modes")
        defer { dir.remove() }
        let data = dir.url.appendingPathComponent("d").path
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let before = umask(0o022)
        defer { umask(before) }
        let (server, url) = try startServer(data)
        let (status, _, err) = try ChildProcess.runUbiq(["server", "user", "add", "bob", "--password-stdin", "--data", data], stdin: "pw-bob\n")
        #expect(status == 0, "\(err)")
        var bob = UbiqAPIClient(baseURL: url)
        bob.token = try await bob.login(user: "bob", password: "pw-bob", deviceName: "laptop").0.token
        _ = try await upload(bob, Array(repeating: 7, count: 300_000))
        server.signal(SIGTERM)
        #expect(server.wait(timeout: 30) == 0)
        func mode(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1 }
        #expect(mode(data) == 0o700, "data folder \(String(mode(data), radix: 8))")
        var checked = 0
        let e = FileManager.default.enumerator(atPath: data)
        while let rel = e?.nextObject() as? String {
            let m = mode(data + "/" + rel)
            #expect(m & 0o077 == 0, "\(rel) is \(String(m, radix: 8))")
            checked += 1
        }
        #expect(checked >= 3, "\(checked) entries")
    }

    /// #23 §3: `ubiq server` writes one line per request at `info` (method, route, status,
    /// bytes, time) and never a password or a token.
    @Test func eachRequestIsOneLogLineWithoutSecrets() async throws {
        let dir = try TempDirectory("ubiq-log")
        defer { dir.remove() }
        let data = dir.url.appendingPathComponent("d").path
        let (status, _, err) = try ChildProcess.runUbiq(["server", "user", "add", "bob", "--password-stdin", "--data", data], stdin: "pw-bob-secret\n")
        #expect(status == 0, "\(err)")
        let (server, url) = try startServer(data)
        var bob = UbiqAPIClient(baseURL: url)
        let token = try #require(try await bob.login(user: "bob", password: "pw-bob-secret", deviceName: "laptop").0.token)
        bob.token = token
        _ = try await bob.account()
        await #expect(throws: ClientError.self) { _ = try await UbiqAPIClient(baseURL: url).login(user: "bob", password: "wrong-secret", deviceName: "x") }
        let logged = server.waitForOutput(timeout: 20) { _ in server.stderr.contains("GET /v1/account 200") }
        server.signal(SIGTERM)
        #expect(server.wait(timeout: 30) == 0)
        #expect(logged != nil, "\(server.stderr)")
        let log = server.stderr
        #expect(log.contains("POST /v1/login 200") && log.contains("POST /v1/login 401"), "\(log)")
        #expect(log.contains(" ms"))
        for secret in ["pw-bob-secret", "wrong-secret", token, String(token.dropFirst(4).prefix(20))] {
            #expect(!log.contains(secret), "the log holds a secret")
        }
    }

    /// `ubiq server --tls-cert/--tls-key` as a person runs it, with a certificate authority of
    /// their own: `ubiq login --ca-cert` trusts it, and `ubiq sync` then syncs over HTTPS and
    /// `wss://`; without it, or with bad files, one clear line and nothing saved.
    @Test func aServerWithItsOwnCertificateSyncsOverTLS() async throws {
        let dir = try TempDirectory("ubiq-tls")
        defer { dir.remove() }
        let certs = try TestCertificates.make()
        func file(_ name: String, _ text: String) throws -> String {
            let p = dir.url.appendingPathComponent(name).path
            try Data(text.utf8).write(to: URL(fileURLWithPath: p))
            return p
        }
        let cert = try file("server.pem", certs.serverPEM), key = try file("server.key", certs.serverKeyPEM)
        let ca = try file("ca.pem", certs.authorityPEM), junk = try file("junk.pem", "not a certificate")
        let data = dir.url.appendingPathComponent("data").path, home = dir.url.appendingPathComponent("home").path
        var (status, _, err) = try ChildProcess.runUbiq(["server", "user", "add", "alice", "--password-stdin", "--data", data], stdin: "pw-alice\n")
        #expect(status == 0, "\(err)")
        // Bad server options.
        (status, _, _) = try ChildProcess.runUbiq(["server", "--data", data, "--tls-cert", cert])
        #expect(status == 2, "--tls-cert without --tls-key is bad usage")
        (status, _, err) = try ChildProcess.runUbiq(["server", "--data", data, "--listen", "127.0.0.1:0", "--tls-cert", junk, "--tls-key", key])
        #expect(status == 1 && err.contains("not a PEM certificate") && err.split(separator: "\n").count == 1, "\(err)")
        (status, _, err) = try ChildProcess.runUbiq(["server", "--data", data, "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", dir.url.path + "/none"])
        #expect(status == 1 && err.contains("cannot read the TLS key"), "\(err)")

        let (server, url) = try startServer(data, ["--tls-cert", cert, "--tls-key", key])
        defer { server.signal(SIGTERM); server.wait() }
        #expect(url.hasPrefix("https://127.0.0.1:"), "\(url)")
        // Not trusted yet: refused, clearly, and the home stays signed out.
        (status, _, err) = try ChildProcess.runUbiq(["login", url, "--user", "alice", "--password-stdin", "--home", home], stdin: "pw-alice\n")
        #expect(status == 1 && err.contains("--ca-cert") && err.split(separator: "\n").count == 1, "\(err)")
        (status, _, err) = try ChildProcess.runUbiq(["login", url, "--user", "alice", "--password-stdin", "--home", home, "--ca-cert", junk], stdin: "pw-alice\n")
        #expect(status == 1 && err.contains("junk.pem"), "\(err)")
        var shown = ""
        (status, shown, err) = try ChildProcess.runUbiq(["status", "--json", "--home", home])
        #expect(shown.contains("signedOut"), "\(shown) \(err)")
        // Trusted: login, a file synced up with `ubiq sync`.
        (status, _, err) = try ChildProcess.runUbiq(["login", url, "--user", "alice", "--password-stdin", "--home", home, "--ca-cert", ca, "--device", "laptop"], stdin: "pw-alice\n")
        #expect(status == 0, "\(err)")
        let docs = URL(fileURLWithPath: home).appendingPathComponent("Ubiquity/iCloud.default/Documents")
        try Data("sent over TLS".utf8).write(to: docs.appendingPathComponent("tls.txt"))
        (status, _, err) = try ChildProcess.runUbiq(["sync", "--home", home])
        #expect(status == 0, "\(err)")
        let (c, _) = try await UbiqAPIClient(baseURL: url, trusting: certs.authorityPEM).login(user: "alice", password: "pw-alice", deviceName: "check")
        let items = try await c.changes(try ContainerID(validating: "iCloud.default"), after: 0).items
        #expect(items.contains { $0.path.string == "Documents/tls.txt" && $0.current?.size == 13 }, "\(items.map { $0.path.string })")
    }

    @Test func commandLineErrorsAreOneClearLine() throws {
        let dir = try TempDirectory("ubiq-cli")
        defer { dir.remove() }
        let data = dir.url.appendingPathComponent("d").path
        var (status, out, err) = try ChildProcess.runUbiq(["server", "user", "add", "bob", "--data", data])
        #expect(status == 0 && out.contains("password: "))
        (status, _, err) = try ChildProcess.runUbiq(["server", "user", "add", "bob", "--data", data])
        #expect(status == 1 && err.contains("already exists"))
        #expect(err.split(separator: "\n").count == 1)
        (status, _, err) = try ChildProcess.runUbiq(["server", "user", "add", "Bad Name!", "--data", data])
        #expect(status == 1 && err.contains("user name"))
        (status, _, err) = try ChildProcess.runUbiq(["server", "user", "add", "carol", "--quota", "lots", "--data", data])
        #expect(status == 1 && err.contains("not a size"))
        (status, _, _) = try ChildProcess.runUbiq(["server", "--listen", "127.0.0.1:99999", "--data", data])
        #expect(status == 2)
        (status, _, _) = try ChildProcess.runUbiq(["server", "--bogus"])
        #expect(status == 2)
        // An unusable data directory: a regular file in the way.
        let file = dir.url.appendingPathComponent("file").path
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        (status, _, err) = try ChildProcess.runUbiq(["server", "--data", file + "/sub", "--listen", "127.0.0.1:0"])
        #expect(status == 1 && err.hasPrefix("ubiq: ") && err.split(separator: "\n").count == 1)
        // A database that is not PostgreSQL's, or that nobody answers for: one line each.
        (status, _, err) = try ChildProcess.runUbiq(["server", "migrate", "--data", data])
        #expect(status == 1 && err.contains("--database") && err.split(separator: "\n").count == 1, "\(err)")
        (status, _, err) = try ChildProcess.runUbiq(["server", "user", "list", "--data", data, "--database", "mysql://u@h/db"])
        #expect(status == 1 && err.contains("postgres://") && err.split(separator: "\n").count == 1, "\(err)")
        (status, _, err) = try ChildProcess.runUbiq(["server", "user", "list", "--data", data, "--database", "postgres://u:secret-word@127.0.0.1:1/db"])
        // #45 row 7: a password on the command line is in the process list: a warning says so
        // (and where else it can come from) before the error's one line.
        let lines = err.split(separator: "\n")
        #expect(status == 1 && err.contains("127.0.0.1:1") && !err.contains("secret-word") && lines.count == 2, "\(err)")
        #expect(lines.first?.contains("warning: --database holds a password") == true && err.contains("UBIQ_DATABASE_PASSWORD"), "\(err)")
        (status, _, err) = try ChildProcess.runUbiq(["server", "user", "list", "--data", data, "--database", "postgres://u@127.0.0.1:1/db"],
                                                    environment: ProcessInfo.processInfo.environment.merging(["UBIQ_DATABASE_PASSWORD": "secret-word"]) { $1 })
        #expect(status == 1 && !err.contains("warning") && err.split(separator: "\n").count == 1, "no warning for a password from the environment: \(err)")
    }

    /// `ubiq server gc`: a running server is asked (with the token it left in its private data
    /// folder, nobody else's token passes); on a stopped one the command collects itself.
    @Test func gcAsksARunningServerAndCollectsAStoppedOnesItself() async throws {
        let dir = try TempDirectory("ubiq-gc")
        defer { dir.remove() }
        let data = dir.url.appendingPathComponent("data").path
        var (status, _, err) = try ChildProcess.runUbiq(["server", "user", "add", "alice", "--password-stdin", "--data", data], stdin: "pw-alice\n")
        #expect(status == 0, "\(err)")
        let (server, url) = try startServer(data)
        let (c, _) = try await UbiqAPIClient(baseURL: url).login(user: "alice", password: "pw-alice", deviceName: "laptop")
        var rng = SeededRandom.forTest("process.gc")
        var ids: [ItemID] = []
        for i in 0..<3 { ids.append(try await commitPacked(c, "Documents/f\(i).bin", rng.bytes(250_000)).item.id) }
        for id in ids.dropFirst() { _ = try await c.delete(notes, item: id) }
        _ = try await c.emptyTrash(notes)

        var out: String
        (status, out, err) = try ChildProcess.runUbiq(["server", "gc", "--json", "--data", data])
        #expect(status == 0, "\(err)")
        let report = try JSONDecoder().decode(GarbageReport.self, from: Data(out.utf8))
        #expect(report.garbageBytes == 500_000 && !report.dryRun && report.storeBytesBefore - report.storeBytesAfter >= 500_000, "\(out)")
        let access = dir.url.appendingPathComponent("data/admin.json").path
        let mode = try FileManager.default.attributesOfItem(atPath: access)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // Only the administrator's token is taken: not a device's, not a guess.
        for token in [c.token ?? "", "adm_guess"] {
            let e = await #expect(throws: ClientError.self) { _ = try await UbiqAPIClient(baseURL: url, token: token).collectGarbage(dryRun: true) }
            #expect(e?.code == .unauthorized)
        }
        server.signal(SIGTERM)
        #expect(server.wait() == 0)

        (status, out, err) = try ChildProcess.runUbiq(["server", "gc", "--dry-run", "--data", data])
        #expect(status == 0 && out.contains("0 of ") && out.contains("would be removed"), "\(out) \(err)")
        (status, out, err) = try ChildProcess.runUbiq(["server", "gc", "--data", data])
        #expect(status == 0 && out.contains("given back"), "\(out) \(err)")
    }
}
