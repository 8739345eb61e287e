import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqProtocol
import UbiqTesting

@Suite("Hostile input")
struct ValidationTests {
    func commitJSON(path: String) -> [UInt8] {
        let m = Manifest.of([])
        let body = """
        {"itemID":"\(UUID().uuidString)","versionID":"\(UUID().uuidString)","path":\(jsonString(path)),"kind":"file",
         "modified":"2026-01-01T00:00:00.000Z","manifest":{"chunks":[],"size":0,"hash":"\(m.hash.hex)"}}
        """
        return Array(body.utf8)
    }

    func jsonString(_ s: String) -> String {
        String(decoding: try! JSONEncoder().encode(s), as: UTF8.self)
    }

    func errorCode(_ body: [UInt8]) -> String? {
        (try? WireCoding.decode(APIErrorBody.self, from: Data(body)))?.error.code.rawValue
    }

    /// Hash lists travel as one string of hashes back to back; the array form is still read,
    /// and anything else is a clear 400.
    @Test func hashListsInBothFormsAndBrokenOnesRefused() async throws {
        var rng = SeededRandom.forTest("hashlist")
        for _ in 0..<200 {
            let hashes = (0..<Int.random(in: 0...50, using: &rng)).map { _ in ContentHash.of(rng.bytes(4)) }
            #expect(HashList.parse(HashList.string(hashes)) == hashes)
            let json = try WireCoding.encode(MissingChunksRequest(hashes: hashes))
            #expect(try WireCoding.decode(MissingChunksRequest.self, from: json).hashes == hashes)
        }
        try await withServer { server in
            let (c, _) = try await server.device("alice")
            let h = [ContentHash.of([1]), ContentHash.of([2])]
            for body in ["{\"hashes\":[\"\(h[0].hex)\",\"\(h[1].hex)\"]}", "{\"hashes\":\"\(h[0].hex)\(h[1].hex)\"}"] {
                let (status, answer) = try await c.raw(.POST, "/v1/chunks/missing", body: Array(body.utf8))
                #expect(status == 200)
                #expect(try WireCoding.decode(MissingChunksResponse.self, from: Data(answer)).missing == h)
            }
            for bad in ["{\"hashes\":\"abc\"}", "{\"hashes\":\"\(h[0].hex)x\"}", "{\"hashes\":\"\(String(repeating: "z", count: 64))\"}", "{\"hashes\":5}"] {
                let (status, answer) = try await c.raw(.POST, "/v1/chunks/missing", body: Array(bad.utf8))
                #expect(status == 400 && errorCode(answer) == "invalid_request", "\(bad)")
            }
        }
    }

    /// A file's hash must be its chunk list's and its size their sum: anything else is refused
    /// and nothing is stored (a device that hashed the file one way cannot record another).
    @Test func aCommitWhoseHashIsNotItsChunkListsIsRefused() async throws {
        try await withServer { server in
            let (c, _) = try await server.device("alice")
            var rng = SeededRandom.forTest("commit.hash")
            let bytes = rng.bytes(200_000)
            let m = try await upload(c, bytes)
            #expect(m.chunks.count > 1 && m.isConsistent)
            func commit(_ manifest: Manifest, _ name: String) async throws {
                _ = try await c.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("Documents/\(name)"),
                                                            kind: .file, base: nil, modified: Date(), manifest: manifest))
            }
            let wholeFileDigest = Manifest(chunks: m.chunks, size: m.size, hash: ContentHash.of(bytes))
            await expectCode(.hashMismatch) { try await commit(wholeFileDigest, "whole.bin") }
            let reordered = Manifest(chunks: m.chunks.reversed(), size: m.size, hash: m.hash)
            await expectCode(.hashMismatch) { try await commit(reordered, "reordered.bin") }
            let wrongSize = Manifest(chunks: m.chunks, size: m.size + 1, hash: m.hash)
            await expectCode(.invalidRequest) { try await commit(wrongSize, "size.bin") }
            let emptyWithAHash = Manifest(chunks: [], size: 0, hash: m.hash)
            await expectCode(.hashMismatch) { try await commit(emptyWithAHash, "empty.bin") }
            // Permission bits are 0…0o777; anything else (a file type, setuid, a negative) is refused.
            for bad in [-1, 0o1000, 0o4755, Int.max] {
                await expectCode(.invalidRequest) {
                    _ = try await c.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("Documents/mode.bin"),
                                                                kind: .file, base: nil, modified: Date(), manifest: m, permissions: bad))
                }
            }
            #expect(try await c.changes(notes, after: 0).items.filter { $0.kind == .file }.isEmpty, "nothing was recorded")
            try await commit(m, "right.bin")
            #expect(try await c.changes(notes, after: 0).items.filter { $0.kind == .file }.map(\.path.string) == ["Documents/right.bin"])
        }
    }

    /// #23 row 1: a delta (or a manifest) whose chunk sizes add up past `Int.max` trapped in
    /// `ManifestDelta.apply` and took the server down for every user. Sizes are now checked as
    /// they are read and added without trapping; the device applies deltas from the server the
    /// same way.
    @Test func chunkSizesThatOverflowAreRefusedAndTheServerStaysUp() async throws {
        try await withServer { server in
            let (c, _) = try await server.device("alice")
            let m = try await upload(c, { var rng = SeededRandom.forTest("overflow"); return rng.bytes(100_000) }())
            let first = try await c.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("Documents/a.bin"),
                                                                kind: .file, base: nil, modified: Date(), manifest: m))
            let base = try #require(first.version).id
            let huge = "{\"hash\":\"\(m.chunks[0].hash.hex)\",\"size\":9223372036854775807}"
            let negative = "{\"hash\":\"\(m.chunks[0].hash.hex)\",\"size\":-5}"
            func commit(_ extra: String) -> [UInt8] {
                Array("""
                {"itemID":"\(first.item.id.uuid.uuidString)","versionID":"\(UUID().uuidString)","path":"Documents/a.bin","kind":"file",
                 "base":"\(base.uuid.uuidString)","modified":"2026-01-01T00:00:00.000Z",\(extra)}
                """.utf8)
            }
            let bodies = [
                "\"manifestDelta\":{\"base\":\"\(base.uuid.uuidString)\",\"pieces\":[\(huge),\(huge)],\"size\":-2,\"hash\":\"\(m.hash.hex)\",\"digest\":\"\(m.hash.hex)\"}",
                "\"manifestDelta\":{\"base\":\"\(base.uuid.uuidString)\",\"pieces\":[{\"copy\":[0,1]},\(negative)],\"size\":1,\"hash\":\"\(m.hash.hex)\",\"digest\":\"\(m.hash.hex)\"}",
                "\"manifest\":{\"chunks\":[\(huge),\(huge)],\"size\":-2,\"hash\":\"\(m.hash.hex)\"}",
                "\"manifest\":{\"chunks\":[\(negative)],\"size\":-5,\"hash\":\"\(m.hash.hex)\"}",
                "\"manifest\":{\"chunks\":\"\(m.chunks[0].hash.hex):9999999999\",\"size\":9999999999,\"hash\":\"\(m.hash.hex)\"}",
            ]
            for body in bodies {
                let (status, answer) = try await c.raw(.POST, "/v1/containers/\(notes)/commit", body: commit(body))
                #expect(status == 400 && errorCode(answer) == "invalid_request", "\(body.prefix(60)) → \(status)")
            }
            #expect(try await c.account().user == "alice", "the server is still up")
            let versions = try await c.versions(notes, item: first.item.id)
            #expect(versions.others.isEmpty && versions.conflicts.isEmpty && versions.current?.id == base, "nothing was stored")
        }
        // The same pieces applied on a device: an error, not a trap.
        let h = ContentHash.of([1])
        let delta = ManifestDelta(base: VersionID(uuid: UUID()), pieces: [.chunk(ChunkRef(hash: h, size: .max)), .chunk(ChunkRef(hash: h, size: .max))],
                                  size: -2, hash: h, digest: h)
        #expect(throws: CoreError.self) { _ = try delta.apply(baseChunks: []) }
        #expect(!Manifest(chunks: [ChunkRef(hash: h, size: .max), ChunkRef(hash: h, size: .max)], size: -2, hash: h).isConsistent)
        #expect(!Manifest(chunks: [ChunkRef(hash: h, size: -1)], size: -1, hash: h).isConsistent)
    }

    /// #23 row 3: an object of 40,000 names (429 KB) posted to the commits route cost 46 s of
    /// CPU (each name was looked for in a list of the names before it) and stalled every other
    /// user. Names are now kept in a set, and an object with more names than any message has
    /// is left to Foundation's reader. The bound below is a hang guard, not a speed measure.
    @Test func anObjectWithManyNamesIsRefusedWithoutStallingTheServer() async throws {
        try await withServer { server in
            let (c, _) = try await server.device("alice")
            let names = (0..<40_000).map { "\"k\($0)\":1" }.joined(separator: ",")
            let bodies = ["{\"commits\":[{\(names)}]}", "{\(names),\"commits\":[]}", "{\"commits\":[{\(names),\"k1\":2}]}"]
            let started = ContinuousClock.now
            try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
                for body in bodies {
                    group.addTask { try await c.raw(.POST, "/v1/containers/\(notes)/commits", body: Array(body.utf8)) }
                }
                for try await (status, answer) in group {
                    #expect((400..<500).contains(status) || status == 200, "\(status)")
                    if status != 200 { #expect(errorCode(answer) != nil) }
                }
            }
            let took = ContinuousClock.now - started
            #expect(took < .seconds(15), "three 40,000-name objects took \(took)")
            #expect(try await c.account().user == "alice")
            #expect(try await c.changes(notes, after: 0).items.isEmpty, "nothing was stored")
        }
        // The hand-written reader gives up on such an object (Foundation's reader decides).
        let many = "{\"commits\":[]," + (0..<40_000).map { "\"k\($0)\":1" }.joined(separator: ",") + "}"
        #expect(CommitBatchRequest.fastDecode(Data(many.utf8)) == nil)
        #expect(CommitBatchRequest.fastDecode(Data("{\"commits\":[],\"k\":1}".utf8)) != nil)
    }

    /// #23 row 7: the same version asked for 1,000 times in one manifests query built every
    /// copy (server 128 → 941 MiB, a 335 MB answer). A version may appear once per query.
    @Test func aManifestsQueryNamesEachVersionOnce() async throws {
        try await withServer { server in
            let (c, _) = try await server.device("alice")
            let m = try await upload(c, { var rng = SeededRandom.forTest("manifests.dup"); return rng.bytes(300_000) }())
            let r = try await c.commit(notes, CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: path("Documents/big.bin"),
                                                            kind: .file, base: nil, modified: Date(), manifest: m))
            let v = try #require(r.version).id
            #expect(try await c.manifests(notes, versions: [v]) == [m])
            await expectCode(.invalidRequest) { _ = try await c.manifests(notes, versions: Array(repeating: v, count: 1000)) }
            await expectCode(.invalidRequest) { _ = try await c.manifests(notes, versions: [v, v]) }
            #expect(try await c.account().user == "alice")
        }
    }

    @Test func hostilePathsAreRejected() async throws {
        try await withServer { server in
            let (c, _) = try await server.device("alice")
            for bad in ["../etc/passwd", "/abs", "a/../../b", "a//b", "", "a\u{0}b", "a\u{1B}[31m", String(repeating: "x", count: 401),
                        "./a", "a/.", String(repeating: "ab/", count: 1400)] {
                let (status, body) = try await c.raw(.POST, "/v1/containers/\(notes)/commit", body: commitJSON(path: bad))
                #expect(status == 400, "path \(bad.debugDescription.prefix(30)) got \(status)")
                #expect(errorCode(body) == "invalid_path" || errorCode(body) == "invalid_request", "\(bad.debugDescription.prefix(30))")
            }
            // Invalid UTF-8 in the JSON body.
            var raw = commitJSON(path: "ok.txt")
            if let i = raw.firstIndex(of: UInt8(ascii: "k")) { raw[i] = 0xFF }
            let (s, _) = try await c.raw(.POST, "/v1/containers/\(notes)/commit", body: raw)
            #expect(s == 400)
            // Nothing was stored.
            #expect(try await c.changes(notes, after: 0).items.isEmpty)
            // A good path works.
            let (ok, _) = try await c.raw(.POST, "/v1/containers/\(notes)/commit", body: commitJSON(path: "Documents/ok.txt"))
            #expect(ok == 200)
        }
    }

    @Test func malformedBodiesAndParametersAreRejected() async throws {
        try await withServer { server in
            let (c, _) = try await server.device("alice")
            let cases: [(HTTPMethodName, String, String?)] = [
                (.post, "/v1/containers/\(notes)/commit", "{"),
                (.post, "/v1/containers/\(notes)/commit", "[]"),
                (.post, "/v1/containers/\(notes)/commit", "{\"itemID\": 5}"),
                (.post, "/v1/containers/\(notes)/commit", String(repeating: "[", count: 100_000)),
                (.post, "/v1/containers/bad%20name/commit", "{}"),
                (.post, "/v1/containers/..%2F..%2Fetc/commit", "{}"),
                (.get, "/v1/containers/\(notes)/changes?cursor=-5", nil),
                (.get, "/v1/containers/\(notes)/changes?cursor=abc", nil),
                (.get, "/v1/containers/\(notes)/items/not-a-uuid/versions", nil),
                (.post, "/v1/chunks/missing", "{\"hashes\": [\"zz\"]}"),
                (.post, "/v1/kv/\(notes)", "{\"entries\": [{\"key\": \"k\", \"value\": {\"type\": \"martian\", \"value\": 1}, \"stamp\": {\"wallMillis\": 1, \"counter\": 0}, \"device\": \"\(UUID().uuidString)\"}]}"),
                (.post, "/v1/login", "{\"user\": 1}"),
            ]
            for (method, p, body) in cases {
                let (status, resp) = try await c.raw(method.nio, p, body: body.map { Array($0.utf8) })
                #expect((400..<500).contains(status), "\(p) \(body?.prefix(30) ?? "") → \(status)")
                #expect(errorCode(resp) != nil, "\(p): error body missing")
            }
            let huge = [UInt8](repeating: 0x20, count: WireLimits.maxCommitBody + 10)
            let (s, resp) = try await c.raw(.POST, "/v1/containers/\(notes)/commit", body: huge)
            #expect(s == 413 && errorCode(resp) == "payload_too_large")
            #expect(try await c.account().user == "alice")
        }
    }

    /// A connection that never sends a whole request head (nothing at all, or a few bytes of
    /// one) is closed after the head timeout, and never holds up a server that is asked to stop
    /// (its HTTP handling has not started, so it would otherwise wait for the client to give up:
    /// 60 s for a pooled HTTP client connection). A connection that sent its request is answered.
    @Test func aSilentConnectionIsClosedAndNeverHoldsUpAStop() async throws {
        let server = try await TestServer.start(headTimeout: .seconds(1))
        // Socket waits block: they run off the cooperative pool, which the server needs.
        let port = server.port
        let (silentClosed, trickleClosed) = try await offThePool {
            let silent = try RawSocket.connected(port: port), trickle = try RawSocket.connected(port: port)
            defer { close(silent); close(trickle) }
            RawSocket.sendText(trickle, "GET /v1/hea")
            return (RawSocket.closedByPeer(silent, within: 20), RawSocket.closedByPeer(trickle, within: 20))
        }
        #expect(silentClosed, "a silent connection is closed after the head timeout")
        #expect(trickleClosed, "a partial head is closed after the head timeout")
        // A request whose head arrived is answered, however long after the timeout.
        let answer = try await offThePool {
            let asked = try RawSocket.connected(port: port)
            defer { close(asked) }
            RawSocket.sendText(asked, "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
            usleep(1_500_000)
            return RawSocket.received(asked, within: 20)
        }
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        try await server.user("alice")
        let (c, _) = try await server.device("alice")
        #expect(try await c.account().user == "alice")
        // A silent connection while the server stops.
        let late = try RawSocket.connected(port: port)
        defer { close(late) }
        let stopped = ManagedFlag()
        Task { await server.stop(); stopped.set() }
        #expect(try await offThePool { RawSocket.closedByPeer(late, within: 20) }, "closed when the server stops")
        // Held up, it would wait for the idle timeout (300 s); 60 s leaves room for a loaded machine
        // (CI saw stops of over 20 s twice while the PostgreSQL suites ran beside this one).
        #expect(await eventually(timeout: .seconds(60)) { stopped.isSet }, "the stop was held up")
    }

    /// #23 row 2: `\n\n`, `GARBAGE\r\n\r\n` or a negative or doubled `Content-Length` passed
    /// for a request head, cancelled the head timer, and the connection was never answered nor
    /// closed (300 of 300 still open after 55 s; one kept the server from stopping). Now an
    /// unparsable first request is answered 400 and closed, empty lines alone are no head, and
    /// past the connection cap a new connection is closed at once.
    @Test func anUnparsableFirstRequestIsAnsweredAndClosedAndConnectionsAreCapped() async throws {
        // The idle timeout is far beyond the test's length: the cap is probed while the held
        // connections are surely open, and freed by closing them here (the idle close of a
        // stalled body has its own test below), so no step races a server-side timer.
        let server = try await TestServer.start(headTimeout: .seconds(2), idleTimeout: .seconds(300), maxConnections: 20, maxConnectionsPerAddress: 20)
        let port = server.port
        let heads = ["\n\n", "\r\n\r\n", "GARBAGE\r\n\r\n", "GET /v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
                     "POST /v1/login HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n", "GET / HTTP/9.9\r\n\r\n",
                     "\u{1}\u{2}\r\n\r\n"]
        let outcomes = try await offThePool {
            try heads.map { head -> (String, Bool) in
                let fd = try RawSocket.connected(port: port)
                defer { close(fd) }
                RawSocket.sendText(fd, head)
                // Generous bounds (the head timeout is 2 s): a loaded CI box once took over 20 s.
                let answer = RawSocket.received(fd, within: 30)
                return (answer, RawSocket.closedByPeer(fd, within: 30))
            }
        }
        for (head, (answer, closed)) in zip(heads, outcomes) {
            #expect(closed, "\(head.debugDescription): still open (answer \(answer.prefix(40).debugDescription))")
            #expect(answer.isEmpty || answer.hasPrefix("HTTP/1.1 4"), "\(head.debugDescription): \(answer.prefix(60).debugDescription)")
        }
        // The cap: twenty connections are held (each in the middle of a request body); a
        // connection beyond them is closed at once. Once the client lets them go, the server
        // serves again.
        let (refusedAtOnce, laterServed) = try await offThePool {
            let held = try (0..<20).map { _ in try RawSocket.connected(port: port) }
            for fd in held { RawSocket.sendText(fd, "POST /v1/login HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{") }
            // The server counts a connection when it sets it up: on a busy machine that may lag
            // the client's connect, so a few tries (bounded) until one is refused.
            var refused = false
            for _ in 0..<20 where !refused {
                let extra = try RawSocket.connected(port: port)
                refused = RawSocket.closedByPeer(extra, within: 2)
                close(extra)
            }
            held.forEach { close($0) }
            // The server frees a slot when it sees the close: a few tries (bounded) until served.
            var answer = ""
            for _ in 0..<50 where !answer.hasPrefix("HTTP/1.1 200") {
                let again = try RawSocket.connected(port: port)
                RawSocket.sendText(again, "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
                answer = RawSocket.received(again, within: 10)
                close(again)
                if !answer.hasPrefix("HTTP/1.1 200") { usleep(100_000) }
            }
            return (refused, answer)
        }
        #expect(refusedAtOnce, "the 21st connection was not closed at once")
        #expect(laterServed.hasPrefix("HTTP/1.1 200"), "\(laterServed.prefix(60).debugDescription)")
        // Garbage never holds up a stop: one unparsable request is open while the server stops.
        let late = try RawSocket.connected(port: port)
        defer { close(late) }
        RawSocket.sendText(late, "GARBAGE\r\n\r\n")
        let stopped = ManagedFlag()
        Task { await server.stop(); stopped.set() }
        // Held up, it would wait for the idle timeout (300 s); 60 s leaves room for a loaded machine
        // (CI saw stops of over 20 s twice while the PostgreSQL suites ran beside this one).
        #expect(await eventually(timeout: .seconds(60)) { stopped.isSet }, "the stop was held up")
    }

    /// A kept-alive connection is answered as long as it keeps asking, and closed once it has
    /// been idle for the idle timeout; so is one that stalls in the middle of a request's body.
    /// The push channel, upgraded to a WebSocket, stays open however long it is quiet.
    @Test func idleConnectionsAreClosedButThePushChannelIsNot() async throws {
        let server = try await TestServer.start(idleTimeout: .seconds(2))
        try await server.user("alice")
        let (c, _) = try await server.device("alice")
        let token = try #require(c.token)
        let port = server.port
        let (answers, switched, idleClosed, stalledClosed, pushClosed) = try await offThePool {
            let idle = try RawSocket.connected(port: port), stalled = try RawSocket.connected(port: port), push = try RawSocket.connected(port: port)
            defer { close(idle); close(stalled); close(push) }
            RawSocket.sendText(stalled, "POST /v1/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"user\":")
            RawSocket.sendText(push, "GET /v1/push HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(token)\r\n\r\n")
            let switched = RawSocket.received(push, within: 20)
            // Five requests 0.5 s apart: together longer than the timeout, each well within it.
            var answers = 0
            for i in 0..<5 {
                if i > 0 { usleep(500_000) }
                RawSocket.sendText(idle, "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
                if RawSocket.received(idle, within: 20).hasPrefix("HTTP/1.1 200") { answers += 1 }
            }
            let idleClosed = RawSocket.closedByPeer(idle, within: 20), stalledClosed = RawSocket.closedByPeer(stalled, within: 20)
            // By now the push channel has been quiet for over twice the timeout.
            return (answers, switched, idleClosed, stalledClosed, RawSocket.closedByPeer(push, within: 3))
        }
        #expect(answers == 5, "a connection that keeps asking is kept")
        #expect(switched.hasPrefix("HTTP/1.1 101"), "\(switched)")
        #expect(idleClosed, "an idle kept-alive connection is closed after the idle timeout")
        #expect(stalledClosed, "a request whose body stalls is closed after the idle timeout")
        #expect(!pushClosed, "the push channel is never closed for being quiet")
        #expect(try await c.account().user == "alice")
        await server.stop()
    }

    @Test func garbageOnTheSocketNeverTakesTheServerDown() async throws {
        try await withServer { server in
            var rng = SeededRandom.forTest("socket.garbage")
            let payloads: [[UInt8]] = [
                rng.bytes(4096),
                Array("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n".utf8),
                Array("POST /v1/login HTTP/1.1\r\nContent-Length: 999999999\r\n\r\n{".utf8),
                Array("GARBAGE\r\n\r\n".utf8),
                Array(repeating: UInt8(ascii: "A"), count: 100_000),
                Array("GET /v1/push HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8),
            ]
            let port = server.port
            try await offThePool { for p in payloads { try RawSocket.sendAndClose(port: port, p) } }
            let (c, _) = try await server.device("alice")
            #expect(try await c.account().user == "alice")
        }
    }
}

enum HTTPMethodName {
    case get, post
    var nio: NIOHTTPMethod { self == .get ? .GET : .POST }
}
