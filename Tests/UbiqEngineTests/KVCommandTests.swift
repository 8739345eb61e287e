import Foundation
import Testing
import UbiqCore
import UbiqEngine
import UbiqTesting

extension ProcessBoundTests {
    /// `ubiq kv …` and `ubiq ls --watch` as a person runs them, including a device whose clock runs
    /// hours ahead (libfaketime).
    @Suite("Key-value and live query commands", .serialized)
    struct KVCommandTests {
        typealias Setup = ItemCommandTests.Setup

        func json(_ text: String) -> [String: Any]? { try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] }

        @Test func everyTypeSetAndReadBackFromAnotherDevice() async throws {
            let s = try Setup()
            defer { s.teardown() }
            try s.login("A"); try s.login("B")
            let cases: [(String, String, String, Any)] = [
                ("name", "string", "Ada", "Ada"), ("count", "int", "42", 42), ("ratio", "double", "0.25", 0.25), ("on", "bool", "yes", true),
                ("when", "date", "2026-11-22T10:00:00Z", "2026-11-22T10:00:00.000Z"), ("blob", "data", "AAEC/w==", "AAEC/w=="),
                ("list", "json", "[1, \"two\", {\"three\": 3}]", [1, "two", ["three": 3]] as [Any]),
            ]
            for (key, type, value, _) in cases {
                let (st, _, err) = try s.ubiq("A", ["kv", "set", key, value, "--type", type])
                #expect(st == 0, "\(key): \(err)")
            }
            for (key, type, _, expected) in cases {
                let (st, out, err) = try s.ubiq("B", ["kv", "get", key, "--json"])
                #expect(st == 0, "\(key): \(err)")
                let doc = json(out)
                #expect(doc?["type"] as? String == (type == "json" ? "array" : type), "\(key): \(out)")
                #expect(doc?["modified"] is String && doc?["device"] is String && doc?["key"] as? String == key)
                if type == "bool" {
                    #expect(out.contains("\"value\" : true"), "\(key): \(out)")  // a JSON boolean, not 1
                } else {
                    #expect(String(describing: doc?["value"] ?? "nil") == String(describing: expected), "\(key): \(out)")
                }
            }
            let (_, ls, _) = try s.ubiq("B", ["kv", "ls"])
            #expect(ls.contains("count (int) = 42") && ls.contains("name (string) = Ada"))
            // `kv history`: B changes a key A made, then deletes it; newest first, with the device.
            #expect(try s.ubiq("B", ["kv", "set", "name", "Grace"]).0 == 0 && s.ubiq("B", ["kv", "rm", "name"]).0 == 0)
            let (hs, hist, herr) = try s.ubiq("A", ["kv", "history", "name"])
            let rows = hist.split(separator: "\n")
            #expect(hs == 0 && rows.count == 3, "\(hist) \(herr)")
            #expect(rows.count == 3 && rows[0].hasSuffix("B  (deleted)") && rows[1].hasSuffix("B  (string) Grace") && rows[2].hasSuffix("A  (string) Ada"), "\(hist)")
            let hjson = try JSONSerialization.jsonObject(with: Data(try s.ubiq("A", ["kv", "history", "name", "--json"]).1.utf8)) as? [[String: Any]]
            #expect(hjson?.count == 3 && hjson?[0]["value"] == nil && hjson?[2]["deviceName"] as? String == "A" && hjson?[2]["value"] as? String == "Ada")
            let (ns, _, nerr) = try s.ubiq("A", ["kv", "history", "never"])
            #expect(ns == 1 && nerr.contains("no history for 'never'"), "\(nerr)")
            // Bad input: clear errors, nothing stored.
            let (bs, _, berr) = try s.ubiq("A", ["kv", "set", "count", "forty", "--type", "int"])
            #expect(bs == 1 && berr.contains("not an integer"), "\(berr)")
            #expect(try s.ubiq("A", ["kv", "set", "x", "1", "--type", "float"]).0 == 2)
            let (ks, _, kerr) = try s.ubiq("A", ["kv", "set", String(repeating: "k", count: 65), "v"])
            #expect(ks == 1 && kerr.contains("1-64 bytes"), "\(kerr)")
            let (js, _, _) = try s.ubiq("A", ["kv", "set", "j", "{not json", "--type", "json"])
            #expect(js == 1)
            #expect(json(try s.ubiq("B", ["kv", "get", "count", "--json"]).1)?["value"] as? Int == 42)
            // #24 §3: `-` reads the value from standard input: past the 128 KiB an argument may
            // be, exactly its bytes; over the 1 MiB limit a clear error, nothing stored.
            let big = String(repeating: "long line of text\n", count: 12_000)  // 216,000 bytes
            let (bigStatus, _, bigErr) = try ChildProcess.runUbiq(["kv", "set", "notes", "-", "--home", s.home("A")], stdin: big)
            #expect(bigStatus == 0, "\(bigErr)")
            #expect(json(try s.ubiq("B", ["kv", "get", "notes", "--json"]).1)?["value"] as? String == big)
            let (hugeStatus, _, hugeErr) = try ChildProcess.runUbiq(["kv", "set", "huge", "-", "--home", s.home("A")], stdin: String(repeating: "x", count: (1 << 20) + 10))
            #expect(hugeStatus == 1 && hugeErr.contains("limit"), "\(hugeErr)")
            #expect(try s.ubiq("B", ["kv", "get", "huge"]).0 == 1)
            // rm reaches the other device.
            #expect(try s.ubiq("B", ["kv", "rm", "name"]).0 == 0)
            let (gs, _, gerr) = try s.ubiq("A", ["kv", "get", "name"])
            #expect(gs == 1 && gerr.contains("no key"))
        }

        /// #24 §3: `ubiq config show` says what applies and from where; the environment beats
        /// config.toml; a broken file is one line naming its line, for every command that reads it.
        @Test func configShowNamesEachSettingsSource() throws {
            let dir = try TempDirectory("ubiq-config")
            defer { dir.remove() }
            let conf = dir.url.appendingPathComponent("ubiquity")
            try FileManager.default.createDirectory(at: conf, withIntermediateDirectories: true)
            try "theme = \"dark\"\nsort = \"size\"\n".write(to: conf.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)
            var env = ProcessInfo.processInfo.environment
            env["XDG_CONFIG_HOME"] = dir.url.path
            env["UBIQ_THEME"] = nil; env["NO_COLOR"] = nil; env["UBIQ_LOG_LEVEL"] = nil
            let (st, out, err) = try ChildProcess.runUbiq(["config", "show"], environment: env)
            #expect(st == 0, "\(err)")
            for line in ["theme = \"dark\"", "sort = \"size\"", "color = \"auto\""] { #expect(out.contains(line), "\(out)") }
            #expect(out.split(separator: "\n").contains { $0.hasPrefix("theme = ") && $0.hasSuffix("# config") }, "\(out)")
            #expect(out.split(separator: "\n").contains { $0.hasPrefix("color = ") && $0.hasSuffix("# default") }, "\(out)")
            env["UBIQ_THEME"] = "light"
            let (_, out2, _) = try ChildProcess.runUbiq(["config", "show"], environment: env)
            #expect(out2.split(separator: "\n").contains { $0.hasPrefix("theme = \"light\"") && $0.hasSuffix("# environment") }, "\(out2)")
            try "theme = \"dark\"\ncolor = \"loud\"\n".write(to: conf.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)
            let (bs, _, berr) = try ChildProcess.runUbiq(["config", "show"], environment: env)
            #expect(bs == 1 && berr.contains("config.toml: line 2: color must be one of") && berr.split(separator: "\n").count == 1, "\(berr)")
        }

        @Test func aDeviceWithItsClockHoursAheadLosesToACausallyLaterWrite() async throws {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/faketime") else {
                Issue.record("faketime is not installed (apt-get install faketime)")
                return
            }
            let s = try Setup()
            defer { s.teardown() }
            try s.login("A"); try s.login("B")
            var env = ProcessInfo.processInfo.environment
            env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
            func ahead(_ args: [String]) throws -> (Int32, String, String) {
                let p = try ChildProcess("/usr/bin/faketime", ["-f", "+5h", ChildProcess.ubiqBinary()] + args + ["--home", s.home("A")], stdin: "", environment: env)
                let st = p.wait(timeout: 120)
                return (st, p.stdout, p.stderr)
            }
            let (st, _, err) = try ahead(["kv", "set", "theme", "dark"])
            #expect(st == 0, "\(err)")
            let (_, aJSON, _) = try ahead(["kv", "get", "theme", "--json"])
            let aheadModified = json(aJSON)?["modified"] as? String
            #expect(aheadModified.flatMap(KVDateFormat.parse).map { $0.timeIntervalSinceNow > 4 * 3600 } == true, "A's clock is not ahead: \(aJSON)")
            // B (normal clock) reads A's write, then overwrites it: B's write is causally later and wins.
            #expect(try s.ubiq("B", ["kv", "get", "theme"]).1.contains("dark"))
            #expect(try s.ubiq("B", ["kv", "set", "theme", "light"]).0 == 0)
            #expect(try ahead(["kv", "get", "theme"]).1.contains("light"))
            #expect(try s.ubiq("B", ["kv", "get", "theme"]).1.contains("light"))
        }

        @Test func watchersPrintChangesFromOtherDevices() async throws {
            let s = try Setup()
            defer { s.teardown() }
            try s.login("A"); try s.login("B")
            try s.write("A", "Documents/first.txt", "first")
            #expect(try s.ubiq("A", ["sync"]).0 == 0)
            // kv watch on B (its own in-process engine, live).
            let kvWatch = try ChildProcess(ChildProcess.ubiqBinary(), ["kv", "watch", "--json", "--home", s.home("B")])
            defer { kvWatch.signal(SIGTERM); kvWatch.wait(timeout: 10) }
            #expect(kvWatch.waitForOutput(timeout: 60) { _ in kvWatch.stderr.contains("watching") } != nil || kvWatch.stderr.contains("watching"), "\(kvWatch.stderr)")
            #expect(try s.ubiq("A", ["kv", "set", "volume", "7", "--type", "int"]).0 == 0)
            let line = kvWatch.waitForOutput(timeout: 30) { $0.contains("volume") }
            let change = line.flatMap { $0.split(separator: "\n").first { $0.contains("volume") } }.flatMap { json(String($0)) }
            #expect(change?["reason"] as? String == "serverChange" && change?["keys"] as? [String] == ["volume"], "\(line ?? kvWatch.stderr)")
            kvWatch.signal(SIGTERM); kvWatch.wait(timeout: 10)
            // ls --watch on B: gathered first, then updates as A adds and removes files.
            let lsWatch = try ChildProcess(ChildProcess.ubiqBinary(), ["ls", "name LIKE '*.txt'", "--watch", "--json", "--home", s.home("B")])
            defer { lsWatch.signal(SIGTERM); lsWatch.wait(timeout: 10) }
            #expect(lsWatch.waitForOutput(timeout: 60) { $0.contains("\"gathered\"") } != nil, "\(lsWatch.stderr)")
            try s.write("A", "Documents/second.txt", "second")
            try s.write("A", "Documents/skip.bin", "not matched")
            #expect(try s.ubiq("A", ["sync"]).0 == 0)
            #expect(lsWatch.waitForOutput(timeout: 30) { $0.contains("second.txt") } != nil, "\(lsWatch.stdout)")
            let lines = lsWatch.stdout.split(separator: "\n").compactMap { json(String($0)) }
            #expect(lines.first?["event"] as? String == "gathered")
            #expect((lines.first?["added"] as? [[String: Any]])?.map { $0["name"] as? String } == ["first.txt"])
            #expect(lines.dropFirst().allSatisfy { $0["event"] as? String == "update" })
            #expect(!lsWatch.stdout.contains("skip.bin"))
            // A malformed predicate: one clear line naming the column, usage-independent exit 1.
            let (ps, _, perr) = try s.ubiq("B", ["ls", "size > > 3"])
            #expect(ps == 1 && perr.contains("column 8"), "\(perr)")
        }
    }

    /// `ubiq themes list|check`.
    @Suite("Theme commands")
    struct ThemeCommandTests {
        @Test func listAndCheck() throws {
            let dir = try TempDirectory("ubiq-theme-cmd")
            defer { dir.remove() }
            let themes = dir.url.appendingPathComponent("ubiquity/themes")
            try FileManager.default.createDirectory(at: themes, withIntermediateDirectories: true)
            var env = ProcessInfo.processInfo.environment
            env["XDG_CONFIG_HOME"] = dir.url.path
            func run(_ args: [String]) throws -> (Int32, String, String) {
                let p = try ChildProcess(ChildProcess.ubiqBinary(), args, environment: env)
                let st = p.wait(timeout: 60)
                return (st, p.stdout, p.stderr)
            }
            let (ls, out, _) = try run(["themes", "list"])
            #expect(ls == 0 && ["default", "mono", "light", "dark", "colorblind"].allSatisfy { out.contains($0) })
            #expect(try run(["themes", "check"]).0 == 0)
            try "schema = 1\n[styles]\n\"ui.text\" = { fg = \"no-such-colour\" }\n".write(to: themes.appendingPathComponent("broken.toml"), atomically: true, encoding: .utf8)
            let (cs, cout, cerr) = try run(["themes", "check", "broken"])
            #expect(cs == 1 && cout.contains("no-such-colour") && cerr.contains("problems"), "\(cout) \(cerr)")
            #expect(try run(["themes", "list"]).1.contains("broken.toml"))
        }
    }
}
