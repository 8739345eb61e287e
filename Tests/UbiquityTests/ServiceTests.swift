import Foundation
import Logging
import Testing
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
            let (s1, out1, e1) = try ChildProcess.runUbiq(["service", "install", "--no-start", "--home", home], environment: env)
            #expect(s1 == 0, "\(e1)")
            let unitName = try #require(out1.split(separator: "/").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) })
            #expect(unitName.hasPrefix("ubiq-") && unitName.hasSuffix(".service"), "\(out1)")
            let unit = try String(contentsOf: config.appendingPathComponent("systemd/user/\(unitName)"), encoding: .utf8)
            #expect(unit.contains(" daemon --home \"\(URL(fileURLWithPath: home).standardizedFileURL.path)\""), "\(unit)")
            #expect(unit.contains("Restart=on-failure") && unit.contains("WantedBy=default.target"))
            let exec = try #require(unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") }).dropFirst("ExecStart=".count).split(separator: " ").first.map(String.init)
            #expect(exec.map { FileManager.default.isExecutableFile(atPath: $0) } == true, "the unit names the ubiq binary by its absolute path: \(exec ?? "")")

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
    }
}
