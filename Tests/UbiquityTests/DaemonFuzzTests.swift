import Foundation
import Testing
import UbiqDaemonProtocol
import Ubiquity
import UbiqCore
import UbiqEngine
import UbiqTesting
#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuites {
    /// The running daemon fed damaged requests, each on a connection of its own: every one is
    /// answered with a JSON line (an answer, a refusal or a stream's first line) or closed, and
    /// afterwards the daemon is alive, answers, and still syncs.
    @Suite("The daemon under hostile requests", .serialized)
    struct DaemonFuzzTests {
        @Test func damagedRequestsAreAnsweredAndTheDaemonGoesOn() async throws {
            try await Daemons.with(["A"]) { try await Self.fuzz($0) }
        }

        /// Paths and names a hostile program would send.
        static func hostilePath(_ rng: inout SeededRandom, real: String) -> String {
            let picks = ["", ".", "..", "/", "//", "../..", "Documents/../..", "/etc/passwd", "Documents/\u{0}x", "Documents/a.txt/..",
                         String(repeating: "x", count: 300), String(repeating: "d/", count: 200) + "f", "Documents/ ", "\u{202E}txt.exe",
                         "Documents//a.txt", "./Documents/a.txt", real, real + "/", "state/daemon.sock", "~", "\\", "Documents/\u{FFFF}"]
            return picks.randomElement(using: &rng)!
        }

        static func nastyInt(_ rng: inout SeededRandom) -> Int {
            [Int.max, Int.min, Int.max - 1, -1, 0, 1, 1 << 20, (1 << 20) + 1, 1 << 62, Int(Int32.max)].randomElement(using: &rng)!
        }

        /// A well-formed request with hostile values (the real document is never renamed,
        /// removed or resolved away: the test checks it is untouched afterwards).
        static func hostileRequest(_ rng: inout SeededRandom, real: String, version: String) -> DeviceRequest {
            let p = hostilePath(&rng, real: real)
            let paths = (0..<Int.random(in: 0...3, using: &rng)).map { _ in hostilePath(&rng, real: real) }
            let other = p == real || p == real + "/" || p == "./" + real || p == "Documents//a.txt" ? "Documents/nothing" : p
            switch Int.random(in: 0..<14, using: &rng) {
            case 0: return .versionContent(path: real, version: version, limit: nastyInt(&rng), offset: nastyInt(&rng))
            case 1: return .versionContent(path: p, version: [version, "", "x", String(repeating: "0", count: 1000)].randomElement(using: &rng)!, limit: nastyInt(&rng), offset: nil)
            case 2: return .rename(path: other, name: hostilePath(&rng, real: real))
            case 3: return .makeFolder(path: p)
            case 4: return .mergeDraft(path: p, version: [nil, version, "nope"].randomElement(using: &rng)!)
            case 5: return .restore(path: p)
            case 6: return .download(paths: paths)
            case 7: return .evict(paths: paths.filter { !$0.hasPrefix(real) && $0 != "Documents//a.txt" && $0 != "./Documents/a.txt" })
            case 8: return .pin(paths: paths, on: Bool.random(using: &rng))
            case 9: return .versions(path: p)
            case 10: return .list(query: QuerySpec(predicate: ["name ==", "size > \(Int.max)", "((((", "name like '\(p)'", nil].randomElement(using: &rng)!,
                                                   scope: ["data", "documents", "", "x"].randomElement(using: &rng)!, sort: ["name", "", "size", "?"].randomElement(using: &rng)!,
                                                   intervalMillis: nastyInt(&rng)))
            case 11: return .kvGet(key: p)
            case 12: return .kvHistory(key: p)
            default: return .cancel(paths: paths)
            }
        }

        static func fuzz(_ d: Daemons) async throws {
            var rng = SeededRandom.forTest("daemon.fuzz")
            let a = d.ubiquity("A")
            let doc = d.folder("A").appendingPathComponent("Documents/a.txt")
            try FileManager.default.createDirectory(at: doc.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("fuzz target".utf8).write(to: doc)
            let synced = await eventually(timeout: .seconds(30)) { (try? await a.status(of: doc))?.status == .current }
            #expect(synced)
            let pid = try #require(d.running["A"]).pid
            let path = d.socketPath("A")
            let containers: [ContainerID?] = [nil, try ContainerID(validating: "iCloud.com.example.fuzz")]

            var answered = 0, refused = 0, closed = 0
            let cases = FuzzCases.count(200)
            for i in 0..<cases {
                let request = DaemonRequestSamples.all.randomElement(using: &rng)!
                let container = containers.randomElement(using: &rng)!
                var line = Array(DaemonWire.encodeRequest(request, container: container).readableBytesView.dropLast())
                if i % 4 != 0 { line = rng.mutate(line, edits: 1...5, alphabet: DaemonRequestSamples.alphabet) }
                guard let fd = DaemonProtocolTests.connectRaw(path) else {
                    Issue.record("case \(i): the daemon stopped accepting connections")
                    break
                }
                let text = DaemonProtocolTests.exchange(fd, line + [0x0A], timeout: 20_000)
                close(fd)
                guard let first = text.split(separator: "\n").first else { closed += 1; continue }
                let object = try? JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any]
                #expect(object?["ok"] is Bool, "case \(i): \(String(decoding: line, as: UTF8.self).prefix(300)) → \(first.prefix(300))")
                if object?["ok"] as? Bool == true { answered += 1 } else { refused += 1 }
            }
            print("[daemon.fuzz] \(cases) requests: \(answered) answered, \(refused) refused, \(closed) closed without a line")
            #expect(closed < cases / 10, "almost every request gets a line back")

            // Well-formed requests with hostile values, aimed at a real document and version.
            let version = try #require(try await FileVersion.versions(of: doc, ubiquity: a).current).id
            let real = "Documents/a.txt"
            var hostile = 0
            for i in 0..<FuzzCases.count(200) {
                let request = Self.hostileRequest(&rng, real: real, version: version)
                guard let fd = DaemonProtocolTests.connectRaw(path) else {
                    Issue.record("case \(i): the daemon stopped accepting connections")
                    break
                }
                let line = Array(DaemonWire.encodeRequest(request, container: nil).readableBytesView)
                let text = DaemonProtocolTests.exchange(fd, line, timeout: 20_000)
                close(fd)
                let first = text.split(separator: "\n").first.map(String.init) ?? ""
                let object = try? JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any]
                #expect(object?["ok"] is Bool, "case \(i): \(request) → \(first.prefix(300))")
                if object?["ok"] as? Bool == true, ProcessInfo.processInfo.environment["UBIQ_FUZZ_SHOW"] != nil { print("[daemon.fuzz] taken: \(request)") }
                hostile += 1
            }
            print("[daemon.fuzz] \(hostile) well-formed requests with hostile values answered")
            #expect((try? String(contentsOf: doc, encoding: .utf8)) == "fuzz target", "the document is untouched")

            #expect(kill(pid, 0) == 0, "the daemon is alive")
            #expect(await a.identityToken != nil, "it answers")
            // And it still syncs (a fuzzed request may have paused it: `ubiq resume` as a user would).
            let (resumed, _, why) = try ChildProcess.runUbiq(["resume", "--home", d.home("A").path])
            #expect(resumed == 0, "\(why)")
            let after = d.folder("A").appendingPathComponent("Documents/after.txt")
            try Data("after the fuzzing".utf8).write(to: after)
            let stillSyncs = await eventually(timeout: .seconds(30)) { (try? await a.status(of: after))?.status == .current }
            #expect(stillSyncs, "a new file is synced after the fuzzing")
        }
    }
}
