import Foundation
import Testing
import UbiqCore
import UbiqProtocol
import UbiqTesting

/// The messages written and read by hand (`FastJSONCodable`) against Foundation's coders, which
/// stay the reference: the same bytes written, the same values read, and for damaged input the
/// hand reader either reads what Foundation reads or gives up (Foundation then decides).
@Suite("Hand-written JSON")
struct FastJSONTests {
    struct Gen {
        var rng: SeededRandom
        mutating func int(_ r: ClosedRange<Int>) -> Int { Int.random(in: r, using: &rng) }
        mutating func coin() -> Bool { Bool.random(using: &rng) }
        mutating func uuid() -> UUID { UUID(uuid: withUnsafeBytes(of: (rng.next(), rng.next())) { $0.load(as: uuid_t.self) }) }
        mutating func hash() -> ContentHash { ContentHash.of(rng.bytes(8)) }
        mutating func date() -> Date {
            // Milliseconds, mostly recent, sometimes far (years Foundation's formatter writes).
            let ms = coin() ? Int64(int(1_600_000_000_000...1_900_000_000_000)) : Int64(int(-60_000_000_000_000...250_000_000_000_000))
            return Date(timeIntervalSince1970: Double(ms) / 1000)
        }
        /// Text with what JSON must escape, slashes and characters beyond ASCII.
        mutating func text(_ maxLength: Int, control: Bool = true) -> String {
            let pieces = ["a", "Z", "0", " ", "\"", "\\", "/", "é", "日本", "😀", "\u{7F}", "\u{2028}", "-", "."] + (control ? ["\n", "\t", "\u{1}", "\u{1F}", "\r", "\u{8}", "\u{C}"] : [])
            return (0..<int(0...maxLength)).map { _ in pieces[int(0...pieces.count - 1)] }.joined()
        }
        mutating func path() -> RelativePath {
            while true {
                let parts = (0..<int(1...4)).map { _ in text(12, control: false) }
                if let p = try? RelativePath(validating: parts.joined(separator: "/")) { return p }
            }
        }
        mutating func manifest() -> Manifest {
            let chunks = (0..<int(0...5)).map { _ in ChunkRef(hash: hash(), size: int(1...200_000)) }
            return coin() ? Manifest(chunks: chunks) : Manifest(chunks: chunks, size: int(0...Int(Int32.max)), hash: hash())
        }
        mutating func version() -> VersionRecord {
            VersionRecord(id: VersionID(uuid: uuid()), state: [.current, .conflict, .other][int(0...2)], size: int(0...Int.max),
                          hash: hash(), modified: date(), committed: date(), device: DeviceID(uuid: uuid()), deviceName: text(10), uploaded: coin(),
                          permissions: coin() ? int(0...0o777) : nil, base: coin() ? VersionID(uuid: uuid()) : nil)
        }
        mutating func item() -> ItemRecord {
            ItemRecord(id: ItemID(uuid: uuid()), path: path(), kind: coin() ? .file : .folder, current: coin() ? version() : nil,
                       conflictCount: int(0...3), deletedAt: coin() ? nil : date(), changeSeq: Int64(int(0...Int.max)), created: coin() ? date() : nil)
        }
        mutating func commit() -> CommitRequest {
            CommitRequest(itemID: ItemID(uuid: uuid()), versionID: VersionID(uuid: uuid()), path: path(), kind: coin() ? .file : .folder,
                          base: coin() ? VersionID(uuid: uuid()) : nil, modified: date(), manifest: coin() ? manifest() : nil,
                          parent: coin() ? ItemID(uuid: uuid()) : nil, permissions: coin() ? int(0...0o777) : nil)
        }
        mutating func response() -> CommitResponse {
            CommitResponse(outcome: [.created, .updated, .revived, .conflict, .unchanged][int(0...4)], item: item(),
                           version: coin() ? version() : nil, missing: (0..<int(0...3)).map { _ in hash() })
        }
        mutating func result() -> CommitBatchResult {
            switch int(0...2) {
            case 0: return CommitBatchResult(response: response(), error: nil)
            case 1: return CommitBatchResult(response: nil, error: .init(code: ErrorCode.allCases[int(0...ErrorCode.allCases.count - 1)], message: text(30),
                                                                         item: int(0...1) == 0 ? nil : ItemID(uuid: UUID())))
            default: return CommitBatchResult(response: response(), error: .init(code: .storageFull, message: text(5)))
            }
        }
    }

    /// Foundation's bytes for `value` (sorted keys: the same value gives the same bytes).
    static func reference<T: Encodable>(_ value: T) throws -> Data { try WireCoding.encoder().encode(value) }

    /// Writes by hand and checks the bytes and both readings against Foundation.
    static func check<T: FastJSONCodable>(_ value: T, _ label: String) throws {
        let expected = try reference(value)
        let fast = try #require(value.fastJSON(), "\(label): not written by hand")
        #expect(Data(fast) == expected, "\(label): \(String(decoding: fast, as: UTF8.self)) vs \(String(decoding: expected, as: UTF8.self))")
        let byHand = try #require(T.fastDecode(expected), "\(label): the hand reader gave up on Foundation's bytes")
        #expect(try reference(byHand) == expected, "\(label): read differently by hand")
        #expect(try reference(try WireCoding.decoder().decode(T.self, from: Data(fast))) == expected)
    }

    @Test func messagesAreWrittenAndReadAsFoundationDoes() throws {
        var g = Gen(rng: SeededRandom.forTest("fastjson.roundtrip"))
        for round in 0..<300 {
            try Self.check(ChangesResponse(items: (0..<g.int(0...4)).map { _ in g.item() }, cursor: Int64(g.int(0...1 << 40)), hasMore: g.coin()), "changes \(round)")
            try Self.check(CommitBatchRequest(commits: (0..<g.int(0...4)).map { _ in g.commit() }), "commits \(round)")
            try Self.check(CommitBatchResponse(results: (0..<g.int(0...4)).map { _ in g.result() }), "results \(round)")
            try Self.check(ManifestsResponse(manifests: (0..<g.int(0...3)).map { _ in g.manifest() }), "manifests \(round)")
            try Self.check(g.commit(), "commit \(round)")
            try Self.check(g.response(), "response \(round)")
        }
    }

    /// Damaged bytes: whatever the hand reader accepts, Foundation accepts as the same value.
    @Test func damagedInputIsReadAsFoundationReadsItOrLeftToFoundation() throws {
        var g = Gen(rng: SeededRandom.forTest("fastjson.damaged"))
        var byHand = 0, leftToFoundation = 0
        func damaged(_ original: Data) -> Data {
            var bytes = [UInt8](original)
            for _ in 0..<g.int(1...3) {
                let at = g.int(0...bytes.count - 1)
                switch g.int(0...4) {
                case 0: bytes[at] ^= UInt8(1 << g.int(0...7))
                case 1: bytes.remove(at: at)
                case 2: bytes.insert(Array(" \t\n,:{}[]\"\\-0.5e1nulltruefalse".utf8)[g.int(0...29)], at: at)
                case 3: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + g.int(1...20))], at: at)
                default: bytes.removeSubrange(at..<min(bytes.count, at + g.int(1...20)))
                }
                if bytes.isEmpty { bytes = [UInt8(ascii: "{")] }
            }
            return Data(bytes)
        }
        func probe<T: FastJSONCodable>(_ value: T) throws {
            let data = damaged(try Self.reference(value))
            let foundation = try? WireCoding.decoder().decode(T.self, from: data)
            guard let fast = T.fastDecode(data) else { leftToFoundation += 1; return }
            byHand += 1
            let reference = try #require(foundation, "read by hand, refused by Foundation: \(String(decoding: data, as: UTF8.self))")
            #expect(try Self.reference(fast) == Self.reference(reference), "read differently: \(String(decoding: data, as: UTF8.self))")
        }
        for _ in 0..<1500 {
            try probe(ChangesResponse(items: (0..<g.int(1...2)).map { _ in g.item() }, cursor: Int64(g.int(0...99)), hasMore: g.coin()))
            try probe(CommitBatchRequest(commits: (0..<g.int(1...2)).map { _ in g.commit() }))
            try probe(CommitBatchResponse(results: (0..<g.int(1...2)).map { _ in g.result() }))
            try probe(ManifestsResponse(manifests: [g.manifest()]))
        }
        #expect(byHand > 100 && leftToFoundation > 1000, "hand \(byHand), Foundation \(leftToFoundation)")
    }

    /// The forms the hand reader leaves to Foundation are still read (through `WireCoding`).
    @Test func earlierFormsAndRareEscapesAreStillRead() throws {
        let h = ContentHash.of([1]), v = VersionID(uuid: UUID())
        let arrayChunks = #"{"manifests":[{"chunks":[{"hash":"\#(h)","size":5}],"hash":"\#(h)","size":5}]}"#
        #expect(try WireCoding.decode(ManifestsResponse.self, from: Data(arrayChunks.utf8)).manifests[0].chunks == [ChunkRef(hash: h, size: 5)])
        let surrogates = #"{"cursor":1,"hasMore":false,"items":[{"changeSeq":1,"conflictCount":0,"id":"\#(ItemID(uuid: UUID()))","kind":"folder","path":"Documents/\ud83d\ude00"}]}"#
        #expect(ChangesResponse.fastDecode(Data(surrogates.utf8)) == nil)
        #expect(try WireCoding.decode(ChangesResponse.self, from: Data(surrogates.utf8)).items[0].path.string == "Documents/😀")
        let delta = CommitRequest(itemID: ItemID(uuid: UUID()), versionID: v, path: try RelativePath(validating: "Documents/a"), kind: .file, base: v,
                                  modified: Date(timeIntervalSince1970: 1), manifest: nil,
                                  manifestDelta: ManifestDelta(base: v, pieces: [], size: 0, hash: h, digest: h))
        #expect(delta.fastJSON() == nil)
        let decoded = try WireCoding.decode(CommitRequest.self, from: try WireCoding.encode(delta))
        #expect(decoded.manifestDelta == delta.manifestDelta)
        let missingArray = #"{"item":{"changeSeq":1,"conflictCount":0,"id":"\#(ItemID(uuid: UUID()))","kind":"folder","path":"Documents"},"missing":["\#(h)"],"outcome":"created"}"#
        #expect(CommitResponse.fastDecode(Data(missingArray.utf8)) == nil)
        #expect(try WireCoding.decode(CommitResponse.self, from: Data(missingArray.utf8)).missing == [h])
    }

    /// A name that comes twice in one object is left to Foundation wherever it comes — among
    /// the first names (checked in a list) or past them (checked in a set) — and an object of
    /// more names than any message has is too; other unknown names are skipped.
    @Test func aNameThatComesTwiceIsLeftToFoundationWhereverItComes() throws {
        func body(extra: Int, repeatAt: Int?) -> Data {
            var members = [#""cursor":1"#, #""hasMore":false"#, #""items":[]"#]
            for k in 0..<extra { members.append("\"k\(k)\":\(k)") }
            if let at = repeatAt { members.insert(#""cursor":2"#, at: at) }
            return Data(("{" + members.joined(separator: ",") + "}").utf8)
        }
        for extra in [0, 10, 13, 14, 40, 200] {
            let read = try #require(ChangesResponse.fastDecode(body(extra: extra, repeatAt: nil)), "\(extra) extra names")
            #expect(read.cursor == 1 && read.items.isEmpty)
            for at in Set([1, 3, min(15, extra + 3), min(16, extra + 3), extra + 3]) {
                #expect(ChangesResponse.fastDecode(body(extra: extra, repeatAt: at)) == nil, "\(extra) extra names, repeated at \(at)")
            }
        }
        #expect(ChangesResponse.fastDecode(body(extra: 300, repeatAt: nil)) == nil)
    }

    /// Brackets nested deeper than any message (in a field the reader skips) are refused with
    /// an error, never a crash: the hand reader gives up at a fixed depth and Foundation refuses.
    @Test func deeplyNestedInputIsRefusedNotACrash() throws {
        for depth in [40, 100_000] {
            let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let body = Data(#"{"commits":[],"x":\#(nested)}"#.utf8)
            #expect(CommitBatchRequest.fastDecode(body) == nil)
            if depth <= 512 {
                #expect(try WireCoding.decode(CommitBatchRequest.self, from: body).commits.isEmpty)
            } else {
                #expect(throws: (any Error).self) { _ = try WireCoding.decode(CommitBatchRequest.self, from: body) }
            }
        }
    }
}
