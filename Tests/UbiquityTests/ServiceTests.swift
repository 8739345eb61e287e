import Foundation
import Logging
import Testing
import UbiqDaemonProtocol
@testable import Ubiquity
import UbiqCore
import UbiqEngine
import UbiqTesting

extension DaemonSuites {
    /// `ubiq service` and the daemon's log, as a user meets them.
    @Suite("The daemon as a service", .serialized)
    struct ServiceTests {
        @Test func installWritesAUnitStatusSeesTheDaemonUninstallRemovesIt() async throws {
            let d = try await Daemons.start(["A"])
            let config = d.dir.url.appendingPathComponent("xdg-config")
            var env = ProcessInfo.processInfo.environment
            env["XDG_CONFIG_HOME"] = config.path
            let home = d.home("A").path
            // --force: the build may live under a folder every user can write (a clone in /tmp).
            let (s1, out1, e1) = try ChildProcess.runUbiq(["service", "install", "--no-start", "--force", "--home", home], environment: env)
            #expect(s1 == 0, "\(e1)")
            let unitName = try #require(out1.split(separator: "/").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) })
            #expect(unitName.hasPrefix("ubiq-") && unitName.hasSuffix(".service"), "\(out1)")
            let unit = try String(contentsOf: config.appendingPathComponent("systemd/user/\(unitName)"), encoding: .utf8)
            let words = try #require(Self.execStart(unit))
            #expect(Array(words.dropFirst()) == ["daemon", "--home", URL(fileURLWithPath: home).standardizedFileURL.path], "\(unit)")
            #expect(unit.contains("Restart=on-failure") && unit.contains("WantedBy=default.target"))
            #expect(words.first.map { $0.hasPrefix("/") && FileManager.default.isExecutableFile(atPath: $0) } == true,
                    "the unit names the ubiq binary by its absolute path: \(words.first ?? "")")

            let (s2, out2, _) = try ChildProcess.runUbiq(["service", "status", "--json", "--home", home], environment: env)
            #expect(s2 == 0)
            #expect(out2.contains("\"installed\" : true") && out2.contains("\"daemonRunning\" : true"), "\(out2)")
            d.stopDaemon("A")
            let (_, out3, _) = try ChildProcess.runUbiq(["service", "status", "--json", "--home", home], environment: env)
            #expect(out3.contains("\"daemonRunning\" : false"), "\(out3)")

            let (s4, out4, _) = try ChildProcess.runUbiq(["service", "uninstall", "--no-start", "--home", home], environment: env)
            #expect(s4 == 0 && out4.contains("removed"))
            #expect(!FileManager.default.fileExists(atPath: config.appendingPathComponent("systemd/user/\(unitName)").path))
            // The daemon wrote its log to the state folder.
            let log = d.home("A").appendingPathComponent("state/ubiq.log")
            #expect(FileManager.default.fileExists(atPath: log.path))
            await d.stop()
        }

        @Test func theLogIsRotatedAndStaysBounded() throws {
            let dir = try TempDirectory("ubiq-log")
            defer { dir.remove() }
            let url = dir.url.appendingPathComponent("ubiq.log")
            let logger = Logger(label: "test") { FileLogHandler(label: $0, url: url, limit: 4096) }
            let other = Logger(label: "another part") { FileLogHandler(label: $0, url: url, limit: 4096) }  // shares the file's rotation
            let line = String(repeating: "x", count: 100)
            for i in 0..<1000 { (i % 2 == 0 ? logger : other).info("\(i) \(line)") }
            let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()
            #expect(names == ["ubiq.log", "ubiq.log.1", "ubiq.log.2", "ubiq.log.3"], "\(names)")
            for n in names {
                let size = (try FileManager.default.attributesOfItem(atPath: dir.url.appendingPathComponent(n).path)[.size] as? Int) ?? 0
                #expect(size <= 4096 + 200, "\(n): \(size) bytes")
            }
            #expect(try String(contentsOf: url, encoding: .utf8).contains("999 "), "the newest line is in the current file")
        }

        /// Processes whose command line holds every one of `words` (from /proc).
        static func processes(with words: [String]) -> [pid_t] {
            let ids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return ids.compactMap { Int32($0) }.filter { pid in
                guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
                let line = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
                return words.allSatisfy { line.contains($0) }
            }
        }

        /// What a process has open (`/proc/PID/fd`'s links: paths, `socket:[N]`, `pipe:[N]`).
        static func openFiles(of pid: pid_t) -> Set<String> {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            return Set(fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") })
        }

        @Test func aProgramStartsTheDaemonWhenAutostartIsOn() async throws {
            let d = try await Daemons.start(["A"])
            do { try await startsTheDaemon(d) } catch {
                await d.stop()  // its server would outlive the test
                throw error
            }
        }

        func startsTheDaemon(_ d: Daemons) async throws {
            d.stopDaemon("A")
            let off = Ubiquity(home: d.home("A"), autostart: false)
            let e = await #expect(throws: UbiquityError.self) { _ = try await KeyValueStore(ubiquity: off).value(forKey: "k") }
            #expect(e?.code == .noDaemon && e?.message.contains("ubiq daemon") == true)

            // The program has something open that is not close-on-exec (as SwiftNIO's sockets are not).
            var ends: [Int32] = [0, 0]
            #expect(pipe(&ends) == 0)
            defer { close(ends[0]); close(ends[1]) }
            var info = stat()
            #expect(fstat(ends[1], &info) == 0)
            let programsPipe = "pipe:[\(info.st_ino)]"

            let on = Ubiquity(home: d.home("A"), autostart: true, executable: URL(fileURLWithPath: ChildProcess.ubiqBinary()))
            #expect(try await on.containers() == ["iCloud.default"], "the daemon was started and answered")
            let started = Self.processes(with: [ChildProcess.ubiqBinary(), "daemon", d.home("A").path])
            #expect(started.count == 1, "one daemon: \(started)")
            for pid in started {
                let held = Self.openFiles(of: pid)
                #expect(!held.isEmpty && !held.contains(programsPipe), "the daemon holds nothing of the program that started it: \(held)")
            }
            #expect(await off.identityToken != nil, "it keeps running for every program")
            for pid in started { kill(pid, SIGTERM) }
            #expect(await eventually { Self.processes(with: [ChildProcess.ubiqBinary(), "daemon", d.home("A").path]).isEmpty })
            await d.stop()
        }

        @Test func autostartIsReadFromTheConfigFile() throws {
            let dir = try TempDirectory("ubiq-autostart")
            defer { dir.remove() }
            let file = dir.url.appendingPathComponent("ubiquity/config.toml")
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            let env = ["XDG_CONFIG_HOME": dir.url.path, "HOME": "/nonexistent"]
            let cases: [(String, Bool)] = [
                ("autostart = true\n", true), ("theme = \"dusk\"\nautostart=true # yes\n", true), ("autostart = false\n", false),
                ("autostart = \"true\"\n", false), ("[table]\nautostart = true\n", false), ("", false), ("autostart\n", false),
            ]
            for (text, expected) in cases {
                try Data(text.utf8).write(to: file)
                #expect(DaemonStarter.configAllows(environment: env) == expected, "\(text.debugDescription)")
            }
            try FileManager.default.removeItem(at: file)
            #expect(!DaemonStarter.configAllows(environment: env), "no file: off")
        }
    
        /// `ExecStart=`'s words as systemd reads them: each word unquoted (double quotes, C
        /// escapes), then specifiers (`%%` is `%`; any other is a failure here), then variables
        /// (`$$` is `$`; any other is a failure here). Nil when the line is not of that form.
        static func execStart(_ unit: String) -> [String]? {
            guard let line = unit.split(separator: "\n").first(where: { $0.hasPrefix("ExecStart=") }) else { return nil }
            var words: [String] = [], word = "", inWord = false, quoted = false
            var it = Array(line.dropFirst("ExecStart=".count).unicodeScalars).makeIterator()
            while let c = it.next() {
                if quoted {
                    if c == "\\" { guard let n = it.next() else { return nil }; word.unicodeScalars.append(n) }
                    else if c == "\"" { quoted = false } else { word.unicodeScalars.append(c) }
                } else if c == " " {
                    if inWord { words.append(word); word = ""; inWord = false }
                } else if c == "\"" { quoted = true; inWord = true
                } else if c == "\\" || c == "'" { return nil  // the unit never needs them outside quotes
                } else { word.unicodeScalars.append(c); inWord = true }
            }
            guard !quoted else { return nil }
            if inWord { words.append(word) }
            func undouble(_ s: String, _ mark: Character) -> String? {
                var out = "", pending = false
                for ch in s {
                    if pending { guard ch == mark else { return nil }; out.append(mark); pending = false }
                    else if ch == mark { pending = true } else { out.append(ch) }
                }
                return pending ? nil : out
            }
            let read = words.map { undouble($0, "%").flatMap { undouble($0, "$") } }
            return read.contains(where: { $0 == nil }) ? nil : read.compactMap { $0 }
        }

        /// #45 row 5: paths went into the unit without systemd's escaping (`%`, `$`, `\`, a
        /// newline passed; `'` became `"`). A home named with each of them is read back by
        /// systemd's rules exactly; a newline is refused.
        @Test func aHomeWithCharactersSystemdReadsIsEscapedInTheUnit() async throws {
            try await Daemons.with([]) { d in
                let config = d.dir.url.appendingPathComponent("xdg-config")
                var env = ProcessInfo.processInfo.environment
                env["XDG_CONFIG_HOME"] = config.path
                for name in ["pct %h %% %", "dollar $HOME ${USER} $$", "back\\slash\\ end\\", "q \"double\" 'single'", "mixed %$\\\"' 日本"] {
                    try d.login(name, as: "alice")
                    let home = d.home(name).path
                    let (s, out, e) = try ChildProcess.runUbiq(["service", "install", "--no-start", "--force", "--home", home], environment: env)
                    #expect(s == 0, "\(name): \(e)")
                    let file = try #require(out.split(separator: " ").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) })
                    let unit = try String(contentsOfFile: file, encoding: .utf8)
                    #expect(Self.execStart(unit).map { Array($0.dropFirst()) } == ["daemon", "--home", home], "\(name): \(unit)")
                    let description = try #require(unit.split(separator: "\n").first { $0.hasPrefix("Description=") })
                    #expect(description.replacingOccurrences(of: "%%", with: "").contains("%") == false, "\(name): \(description)")
                    try FileManager.default.removeItem(atPath: file)
                }
                // A newline would end the setting and start another: refused, nothing written.
                let bad = d.dir.url.appendingPathComponent("new\nline").path
                let (s, _, e) = try ChildProcess.runUbiq(["service", "install", "--no-start", "--force", "--home", bad], environment: env)
                #expect(s != 0)
                #expect(e.contains("control character") || e.contains("not signed in"), "\(e)")
            }
        }

        /// #45 row 5: `service install` pinned the running binary even in `/tmp`, where another
        /// user can put their own once it is gone. A binary others could replace is refused
        /// without `--force`.
        @Test func aBinaryOtherUsersCouldReplaceIsNotPinnedWithoutForce() async throws {
            try await Daemons.with(["A"]) { d in
                let open = d.dir.url.appendingPathComponent("open-to-all")
                try FileManager.default.createDirectory(at: open, withIntermediateDirectories: true)
                chmod(open.path, 0o777)
                let copy = open.appendingPathComponent("ubiq").path
                try FileManager.default.copyItem(atPath: ChildProcess.ubiqBinary(), toPath: copy)
                let config = d.dir.url.appendingPathComponent("xdg-config")
                var env = ProcessInfo.processInfo.environment
                env["XDG_CONFIG_HOME"] = config.path
                let home = d.home("A").path
                let run = { (args: [String]) throws -> (Int32, String, String) in
                    let p = try ChildProcess(copy, args, environment: env)
                    let status = p.wait(timeout: 120)
                    return (status, p.stdout, p.stderr)
                }
                let (s1, _, e1) = try run(["service", "install", "--no-start", "--home", home])
                #expect(s1 == 1 && e1.contains("could be replaced by another user") && e1.contains("writable by others"), "\(e1)")
                #expect((try? FileManager.default.contentsOfDirectory(atPath: config.appendingPathComponent("systemd/user").path))?.isEmpty ?? true, "no unit written")
                let (s2, out2, e2) = try run(["service", "install", "--no-start", "--force", "--home", home])
                #expect(s2 == 0 && out2.contains("wrote"), "\(e2)")
            }
        }

        /// #45 row 6: autostart looked `ubiq` up on `PATH` with relative entries (`.`) included,
        /// so a `ubiq` in the working directory was started detached. Only absolute folders are
        /// searched now, and a candidate another user can replace is passed over.
        @Test func autostartNeverRunsAProgramFromARelativeOrOpenFolder() throws {
            let dir = try TempDirectory("ubiq-path")
            defer { dir.remove() }
            func program(in folder: String, mode: mode_t = 0o755) throws -> String {
                let url = dir.url.appendingPathComponent(folder)
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
                chmod(url.path, mode)
                let file = url.appendingPathComponent("ubiq")
                try Data("#!/bin/sh\nexit 0\n".utf8).write(to: file)
                chmod(file.path, 0o755)
                return url.path
            }
            let here = try program(in: "cwd"), open = try program(in: "open", mode: 0o777), good = try program(in: "good")
            let sticky = try program(in: "sticky", mode: 0o1777)
            // (The working directory is the test process's, shared by every suite: not changed here;
            // a relative entry is passed over whatever folder it would name.)
            _ = here
            var skipped: [String] = []
            let found = ExecutableTrust.search("ubiq", path: ".::cwd:\(open):\(good)") { skipped.append($0) }
            #expect(found == good + "/ubiq", "\(found ?? "none"); passed over: \(skipped)")
            #expect(skipped.count == 4 && skipped[3].contains("writable by others"), "\(skipped)")
            #expect(ExecutableTrust.search("ubiq", path: ".:cwd:") == nil, "only relative entries: nothing")
            // A folder under a sticky one (as a clone in /tmp): fine to run now, not to pin in a unit.
            let inside = dir.url.appendingPathComponent("sticky/inner")
            try FileManager.default.createDirectory(at: inside, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: sticky + "/ubiq", toPath: inside.appendingPathComponent("ubiq").path)
            #expect(ExecutableTrust.search("ubiq", path: inside.path) == inside.path + "/ubiq")
            #expect(ExecutableTrust.replaceableByOthers(inside.path + "/ubiq", lasting: true)?.contains("sticky") == true)
        }
}
}