import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqProtocol
import UbiqTesting

extension ProcessBoundTests {
    /// The item commands as a person runs them: the real binary against a real server, with and
    /// without a daemon for the home.
    @Suite("Item commands (ubiq versions/resolve/download/evict/rm/trash/logout)", .serialized)
    struct ItemCommandTests {
        final class Setup: @unchecked Sendable {
            let dir: TempDirectory
            let server: ChildProcess
            let url: String

            init() throws {
                dir = try TempDirectory("ubiq-items")
                let data = dir.url.appendingPathComponent("server").path
                for u in ["alice", "bob"] {
                    let (s, _, e) = try ChildProcess.runUbiq(["server", "user", "add", u, "--password-stdin", "--data", data], stdin: "pw\n")
                    guard s == 0 else { throw CoreError(.internalError, "user add failed: \(e)") }
                }
                let (p, port) = try ChildProcess.startUbiqServer(data: data)
                server = p
                url = "http://127.0.0.1:\(port)"
            }

            func home(_ name: String) -> String { dir.url.appendingPathComponent("home-\(name)").path }
            func file(_ name: String, _ p: String) -> URL { URL(fileURLWithPath: home(name)).appendingPathComponent("Ubiquity/iCloud.default/" + p) }

            func login(_ name: String, user: String = "alice", extra: [String] = []) throws {
                let (s, _, e) = try ChildProcess.runUbiq(["login", url, "--user", user, "--password-stdin", "--device", name, "--home", home(name)] + extra, stdin: "pw\n")
                guard s == 0 else { throw CoreError(.internalError, "login failed: \(e)") }
            }

            /// Runs `ubiq ARGS --home HOME` (no terminal on stdin).
            func ubiq(_ name: String, _ args: [String]) throws -> (Int32, String, String) {
                try ChildProcess.runUbiq(args + ["--home", home(name)], stdin: "")
            }

            func write(_ name: String, _ p: String, _ text: String) throws {
                let u = file(name, p)
                try FileManager.default.createDirectory(at: u.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(text.utf8).write(to: u)
            }

            func read(_ name: String, _ p: String) -> String? { (try? Data(contentsOf: file(name, p))).map { String(decoding: $0, as: UTF8.self) } }

            func teardown() {
                server.signal(SIGTERM)
                server.wait(timeout: 10)
                dir.remove()
            }
        }

        @Test func conflictInspectedAndResolvedFromTheCommandLine() async throws {
            let s = try Setup()
            defer { s.teardown() }
            try s.login("A"); try s.login("B")
            try s.write("A", "Documents/notes.txt", "base")
            #expect(try s.ubiq("A", ["sync"]).0 == 0)
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            #expect(s.read("B", "Documents/notes.txt") == "base")
            try s.write("A", "Documents/notes.txt", "A's words")
            try s.write("B", "Documents/notes.txt", "B's words, longer")
            #expect(try s.ubiq("A", ["sync"]).0 == 0)
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            // Both see the conflict: ls, status, versions.
            let (st, json, err) = try s.ubiq("A", ["ls", "--json"])
            #expect(st == 0, "\(err)")
            let items = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] ?? []
            let notes = items.first { $0["path"] as? String == "Documents/notes.txt" }
            #expect(notes?["conflict"] as? Bool == true)
            for key in ["path", "name", "itemID", "kind", "size", "created", "modified", "status", "downloading", "percentDownloaded", "uploading",
                        "uploaded", "percentUploaded", "conflict", "excluded", "downloadError", "uploadError"] {
                #expect(notes?.keys.contains(key) == true, "ls --json lacks \(key)")
            }
            let status = try JSONSerialization.jsonObject(with: Data(try s.ubiq("B", ["status", "--json"]).1.utf8)) as? [String: Any]
            #expect(status?["conflicts"] as? Int == 1)
            let (vs, vjson, verr) = try s.ubiq("B", ["versions", "Documents/notes.txt", "--json"])
            #expect(vs == 0, "\(verr)")
            let doc = try JSONSerialization.jsonObject(with: Data(vjson.utf8)) as? [String: Any] ?? [:]
            let current = doc["current"] as? [String: Any], conflicts = doc["conflicts"] as? [[String: Any]] ?? []
            #expect(current?["device"] as? String == "A" && conflicts.first?["device"] as? String == "B")
            for key in ["id", "size", "modified", "device", "hash"] { #expect(current?.keys.contains(key) == true, "version lacks \(key)") }
            #expect((doc["others"] as? [[String: Any]])?.count == 1 && doc["itemID"] is String && doc["path"] as? String == "Documents/notes.txt")
            // Human output names devices, never "ours/theirs".
            let (_, human, _) = try s.ubiq("A", ["versions", "Documents/notes.txt"])
            #expect(human.contains("conflict") && human.contains(" B") && !human.lowercased().contains("theirs"))
            // Resolve from A keeping B's version; B converges.
            guard let keep = conflicts.first?["id"] as? String else { Issue.record("no conflict version"); return }
            let (rs, rout, rerr) = try s.ubiq("A", ["resolve", "Documents/notes.txt", "--keep", keep])
            #expect(rs == 0 && rout.contains("kept"), "\(rerr)")
            #expect(s.read("A", "Documents/notes.txt") == "B's words, longer")
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            #expect(s.read("B", "Documents/notes.txt") == "B's words, longer")
            let after = try JSONSerialization.jsonObject(with: Data(try s.ubiq("B", ["status", "--json"]).1.utf8)) as? [String: Any]
            #expect(after?["conflicts"] as? Int == 0)
            // Bad input: a bad version ID is usage (2); an unknown one and an unknown path fail (1) with one line.
            #expect(try s.ubiq("A", ["resolve", "Documents/notes.txt", "--keep", "nope"]).0 == 2)
            let (us, _, uerr) = try s.ubiq("A", ["resolve", "Documents/notes.txt", "--keep", UUID().uuidString])
            #expect(us == 1 && uerr.split(separator: "\n").count == 1, "\(uerr)")
            let (ns, _, nerr) = try s.ubiq("A", ["versions", "Documents/none.txt"])
            #expect(ns == 1 && nerr.contains("no item"), "\(nerr)")
            let (hs, _, herr) = try s.ubiq("A", ["versions", "../etc/passwd"])
            #expect(hs == 1 && !herr.isEmpty)
            // --keep-both: a new conflict, kept beside the document on both devices.
            try s.write("A", "Documents/notes.txt", "A again")
            try s.write("B", "Documents/notes.txt", "B again, longer")
            #expect(try s.ubiq("A", ["sync"]).0 == 0)
            _ = try s.ubiq("B", ["sync"])
            #expect(try s.ubiq("A", ["resolve", "Documents/notes.txt", "--keep-both", "--keep", UUID().uuidString]).0 == 2, "one or the other")
            let (kb, kout, kerr) = try s.ubiq("A", ["resolve", "Documents/notes.txt", "--keep-both"])
            #expect(kb == 0 && kout.contains("kept beside it: Documents/notes (conflict from B "), "\(kout) \(kerr)")
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            let copies = (try? FileManager.default.contentsOfDirectory(atPath: s.file("B", "Documents").path)) ?? []
            #expect(copies.contains { $0.hasPrefix("notes (conflict from B ") && $0.hasSuffix(").txt") }, "\(copies)")
            #expect(s.read("B", "Documents/notes.txt") == "A again")
        }

        /// #24 §2: `ubiq resolve PATH --merge` — edits to different lines merge without a word;
        /// edits to the same lines go to the editor, and nothing is kept while markers remain.
        @Test func aTextConflictIsMergedFromTheCommandLine() async throws {
            let s = try Setup()
            defer { s.teardown() }
            try s.login("A"); try s.login("B")
            let doc = "Documents/notes.txt"
            try s.write("A", doc, "one\ntwo\nthree\nfour\nfive\n")
            #expect(try s.ubiq("A", ["sync"]).0 == 0)
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            func diverge(_ a: String, _ b: String) throws {
                try s.write("A", doc, a)
                try s.write("B", doc, b)
                #expect(try s.ubiq("A", ["sync"]).0 == 0)
                _ = try s.ubiq("B", ["sync"])
            }
            func conflicts() throws -> Int {
                let v = try JSONSerialization.jsonObject(with: Data(try s.ubiq("A", ["versions", doc, "--json"]).1.utf8)) as? [String: Any]
                return (v?["conflicts"] as? [Any])?.count ?? -1
            }
            // Different lines: merged and kept with no editor; both devices get it.
            try diverge("ONE\ntwo\nthree\nfour\nfive\n", "one\ntwo\nthree\nfour\nFIVE\n")
            #expect(try conflicts() == 1)
            let (ms, mout, merr) = try s.ubiq("A", ["resolve", doc, "--merge", "--no-edit"])
            #expect(ms == 0 && mout.contains("merged") && mout.contains("no conflicting hunks"), "\(mout) \(merr)")
            #expect(try conflicts() == 0)
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            #expect(s.read("A", doc) == "ONE\ntwo\nthree\nfour\nFIVE\n" && s.read("B", doc) == "ONE\ntwo\nthree\nfour\nFIVE\n",
                    "A \(s.read("A", doc) ?? "-"), B \(s.read("B", doc) ?? "-")")
            // The same line: --no-edit refuses; an editor that leaves the markers keeps nothing.
            try diverge("ONE\ntwo\nthree by A\nfour\nFIVE\n", "ONE\ntwo\nthree by B\nfour\nFIVE\n")
            #expect(try conflicts() == 1)
            let (ns, _, nerr) = try s.ubiq("A", ["resolve", doc, "--merge", "--no-edit"])
            #expect(ns == 1 && nerr.contains("1 conflicting hunk"), "\(nerr)")
            var env = ProcessInfo.processInfo.environment
            env["VISUAL"] = ""
            env["EDITOR"] = "true"
            let (ts, _, terr) = try ChildProcess.runUbiq(["resolve", doc, "--merge", "--home", s.home("A")], stdin: "", environment: env)
            #expect(ts == 1 && terr.contains("conflict markers remain"), "\(terr)")
            #expect(try conflicts() == 1 && s.read("A", doc) == "ONE\ntwo\nthree by A\nfour\nFIVE\n")
            // An editor (a script standing in) that settles the hunk: both lines kept, in order.
            let script = s.dir.url.appendingPathComponent("settle.sh")
            try Data("#!/bin/sh\nsed -i -e '/^<<<<<<< /d' -e '/^||||||| /,/^=======$/d' -e '/^>>>>>>> /d' \"$1\"\n".utf8).write(to: script)
            chmod(script.path, 0o755)
            env["EDITOR"] = script.path
            let (es, eout, eerr) = try ChildProcess.runUbiq(["resolve", doc, "--merge", "--home", s.home("A")], stdin: "", environment: env)
            #expect(es == 0 && eout.contains("1 conflicting hunk settled in the editor"), "\(eout) \(eerr)")
            #expect(try conflicts() == 0)
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            let merged = "ONE\ntwo\nthree by A\nthree by B\nfour\nFIVE\n"
            #expect(s.read("A", doc) == merged && s.read("B", doc) == merged, "A \(s.read("A", doc) ?? "-"), B \(s.read("B", doc) ?? "-")")
            // Usage: --version and --no-edit only with --merge; one choice at a time.
            #expect(try s.ubiq("A", ["resolve", doc, "--no-edit", "--keep-both"]).0 == 2)
            #expect(try s.ubiq("A", ["resolve", doc, "--merge", "--keep-both"]).0 == 2)
            #expect(try s.ubiq("A", ["resolve", doc, "--merge", "--conflict", "nope"]).0 == 2)
            #expect(try s.ubiq("A", ["resolve", doc, "--keep-both", "--conflict", UUID().uuidString]).0 == 2)
            // Nothing to merge: one clear line.
            let (zs, _, zerr) = try s.ubiq("A", ["resolve", doc, "--merge", "--no-edit"])
            #expect(zs == 1 && zerr.contains("no conflict to merge"), "\(zerr)")
        }

        @Test func removeAsksOrRefusesAndTrashRestores() async throws {
            let s = try Setup()
            defer { s.teardown() }
            try s.login("A"); try s.login("B")
            try s.write("A", "Documents/old.txt", "old news")
            #expect(try s.ubiq("A", ["sync"]).0 == 0)
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            // No terminal and no --yes: refused, nothing removed.
            let (st, _, err) = try s.ubiq("A", ["rm", "Documents/old.txt"])
            #expect(st == 1 && err.contains("--yes") && err.contains("all devices"), "\(err)")
            #expect(s.read("A", "Documents/old.txt") == "old news")
            // With --yes: gone here, and from B at its next sync; listed in the trash.
            let (ys, yout, yerr) = try s.ubiq("A", ["rm", "--yes", "Documents/old.txt"])
            #expect(ys == 0 && yout.contains("removed"), "\(yerr)")
            #expect(s.read("A", "Documents/old.txt") == nil)
            #expect(try s.ubiq("B", ["sync"]).0 == 0)
            #expect(s.read("B", "Documents/old.txt") == nil)
            let (_, trash, _) = try s.ubiq("B", ["trash", "ls"])
            #expect(trash.contains("Documents/old.txt"))
            // Restore from B, with a daemon running on A: A gets it back live.
            let daemon = try ChildProcess(ChildProcess.ubiqBinary(), ["daemon", "--home", s.home("A")])
            defer { daemon.signal(SIGTERM); daemon.wait(timeout: 10) }
            #expect(daemon.waitForOutput(timeout: 60) { $0.contains("syncing") } != nil)
            let (rs, _, rerr) = try s.ubiq("B", ["trash", "restore", "Documents/old.txt"])
            #expect(rs == 0, "\(rerr)")
            #expect(s.read("B", "Documents/old.txt") == "old news")
            #expect(await eventually { s.read("A", "Documents/old.txt") == "old news" })
            // Commands for A go through its daemon (no second engine): evict and download.
            let (es, _, eerr) = try s.ubiq("A", ["evict", "Documents/old.txt"])
            #expect(es == 0, "\(eerr)")
            #expect(s.read("A", "Documents/old.txt") == nil)
            let (ls, lout, _) = try s.ubiq("A", ["ls", "--json"])
            let listed = (try JSONSerialization.jsonObject(with: Data(lout.utf8)) as? [[String: Any]] ?? []).first { $0["path"] as? String == "Documents/old.txt" }
            #expect(ls == 0 && listed?["status"] as? String == "notDownloaded")
            #expect(try s.ubiq("A", ["download", "Documents/old.txt"]).0 == 0)
            #expect(s.read("A", "Documents/old.txt") == "old news")
            // `pin` through the daemon: listed as pinned (`ls` marks it, `--json` says so); `--off` unpins.
            let (pinStatus, pinOut, pinErr) = try s.ubiq("A", ["pin", "Documents/old.txt"])
            #expect(pinStatus == 0 && pinOut.contains("pinned Documents/old.txt"), "\(pinOut) \(pinErr)")
            #expect(try s.ubiq("A", ["ls"]).1.contains("Documents/old.txt  [pinned]"))
            #expect(try s.ubiq("A", ["pin", "Documents/nothing.txt"]).0 == 1, "a path with no item fails")
            #expect(try s.ubiq("A", ["pin", "--off", "Documents/old.txt"]).0 == 0)
            let unpinned = (try JSONSerialization.jsonObject(with: Data(try s.ubiq("A", ["ls", "--json"]).1.utf8)) as? [[String: Any]] ?? [])
                .first { $0["path"] as? String == "Documents/old.txt" }
            #expect(unpinned?["pinned"] as? Bool == false)
            // `pause PATH` / `resume PATH` through the daemon: only that file's transfers wait (`ls` says so).
            let (hs, hout, herr) = try s.ubiq("A", ["pause", "Documents/old.txt"])
            #expect(hs == 0 && hout.contains("paused Documents/old.txt"), "\(hout) \(herr)")
            #expect(try s.ubiq("A", ["ls"]).1.contains("Documents/old.txt  [paused]"))
            #expect(try s.ubiq("A", ["resume", "Documents/old.txt"]).0 == 0)
            #expect(try s.ubiq("A", ["ls"]).1.contains("[paused]") == false)
            // `retry` through the daemon: nothing is failing, so nothing waits to be tried.
            let (ts, tout, terr) = try s.ubiq("A", ["retry", "Documents"])
            #expect(ts == 0 && tout.contains("nothing was waiting"), "\(tout) \(terr)")
            // #24 §2 `trash empty`: refused without a terminal or --yes; with --yes purged for
            // good (through A's daemon), and a restore finds nothing.
            #expect(try s.ubiq("B", ["rm", "--yes", "Documents/old.txt"]).0 == 0)
            let (es2, _, eerr2) = try s.ubiq("B", ["trash", "empty"])
            #expect(es2 == 1 && eerr2.contains("--yes"), "\(eerr2)")
            #expect(try s.ubiq("B", ["trash", "ls"]).1.contains("Documents/old.txt"), "nothing purged without --yes")
            let (ps, pout, perr) = try s.ubiq("A", ["trash", "empty", "--yes"])
            #expect(ps == 0 && pout.contains("purged 1 item;"), "\(pout) \(perr)")
            #expect(try s.ubiq("B", ["trash", "ls"]).1.contains("the trash is empty"))
            #expect(try s.ubiq("B", ["trash", "restore", "Documents/old.txt"]).0 == 1)
        }

        @Test func logoutRefusesWithPendingChangesForceRescuesThemAndAccountsNeverMix() async throws {
            let s = try Setup()
            defer { s.teardown() }
            try s.login("A")
            try s.write("A", "Documents/synced.txt", "on the server")
            #expect(try s.ubiq("A", ["sync"]).0 == 0)
            try s.write("A", "Documents/draft.txt", "not uploaded yet")
            try s.write("A", "Documents/local.nosync/keep.txt", "local only")
            let (st, _, err) = try s.ubiq("A", ["logout"])
            #expect(st == 1 && err.contains("not uploaded"), "\(err)")
            #expect(s.read("A", "Documents/draft.txt") == "not uploaded yet")
            // Logging in as someone else is refused the same way (the old account's data must not leak).
            let (ls, _, lerr) = try ChildProcess.runUbiq(["login", s.url, "--user", "bob", "--password-stdin", "--home", s.home("A")], stdin: "pw\n")
            #expect(ls == 1 && lerr.contains("not uploaded"), "\(lerr)")
            // --force copies unsynced and excluded items out first, names the folder, empties the container.
            let (fs, fout, ferr) = try s.ubiq("A", ["logout", "--force"])
            #expect(fs == 0, "\(ferr)")
            guard let line = fout.split(separator: "\n").first(where: { $0.contains("copied to ") }),
                  let r = line.range(of: "copied to ") else { Issue.record("no rescue folder named: \(fout)"); return }
            let rescued = URL(fileURLWithPath: String(line[r.upperBound...]))
            #expect((try? String(contentsOf: rescued.appendingPathComponent("Documents/draft.txt"), encoding: .utf8)) == "not uploaded yet")
            #expect((try? String(contentsOf: rescued.appendingPathComponent("Documents/local.nosync/keep.txt"), encoding: .utf8)) == "local only")
            #expect(s.read("A", "Documents/synced.txt") == nil, "the account's files leave the device")
            let (ss, sout, _) = try s.ubiq("A", ["status"])
            #expect(ss == 0 && sout.contains("signed out"))
            // Bob on the same home sees nothing of Alice's.
            try s.login("A", user: "bob")
            #expect(try s.ubiq("A", ["sync"]).0 == 0)
            let (_, bls, _) = try s.ubiq("A", ["ls", "--json"])
            #expect(!bls.contains("synced.txt") && !bls.contains("draft.txt"))
        }
    }
}
