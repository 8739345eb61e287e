import Foundation
import Testing
import UbiqCore
import UbiqTesting

@Suite("FastCDC chunker")
struct ChunkerTests {
    /// A small chunker keeps debug-build tests fast while exercising the same code paths.
    let small = Chunker(minSize: 2048, avgSize: 8192, maxSize: 32768)

    @Test func chunksTileTheInputAndRespectSizes() {
        var rng = SeededRandom.forTest("chunker.tile")
        for _ in 0..<40 {
            let n = Int.random(in: 0...400_000, using: &rng)
            let data = rng.bytes(n)
            let ranges = small.chunkRanges(of: data)
            var pos = 0
            for (i, r) in ranges.enumerated() {
                #expect(r.lowerBound == pos, "seed \(rng.seed)")
                #expect(r.count <= small.maxSize, "seed \(rng.seed)")
                if i < ranges.count - 1 { #expect(r.count >= small.minSize, "seed \(rng.seed)") }
                pos = r.upperBound
            }
            #expect(pos == n, "seed \(rng.seed)")
            let rebuilt = ranges.flatMap { data[$0] }
            #expect(rebuilt == data, "seed \(rng.seed)")
        }
    }

    @Test func boundariesAreDeterministicAndAverageNearTarget() {
        var rng = SeededRandom.forTest("chunker.average")
        let data = rng.bytes(2_000_000)
        let a = small.chunkRanges(of: data)
        #expect(a == small.chunkRanges(of: data))
        let avg = Double(data.count) / Double(a.count)
        // Normalised chunking with min 2 KiB keeps the mean close to the 8 KiB target.
        #expect(avg > 5000 && avg < 14000, "mean chunk \(avg) seed \(rng.seed)")
    }

    @Test(arguments: ["insert", "delete", "overwrite"])
    func anEditChangesOnlyNearbyChunks(kind: String) {
        var rng = SeededRandom.forTest("chunker.edit.\(kind)")
        for _ in 0..<30 {
            let data = rng.bytes(600_000)
            let at = Int.random(in: 0..<data.count, using: &rng)
            let len = Int.random(in: 1...64, using: &rng)
            var edited = data
            switch kind {
            case "insert": edited.insert(contentsOf: rng.bytes(len), at: at)
            case "delete": edited.removeSubrange(at..<min(data.count, at + len))
            default: for i in at..<min(data.count, at + len) { edited[i] = edited[i] &+ 1 }
            }
            let before = small.chunkRanges(of: data)
            let after = small.chunkRanges(of: edited)
            // Every chunk that ends before the edit is unchanged, at the same place.
            let prefix = before.filter { $0.upperBound <= at }
            #expect(Array(after.prefix(prefix.count)) == prefix, "seed \(rng.seed)")
            // Every chunk that starts well after the edit (4 × max) is still there, shifted.
            let shift = edited.count - data.count
            let afterSet = Set(after.map { ($0.lowerBound - shift) ..< ($0.upperBound - shift) }.map { "\($0)" })
            for r in before where r.lowerBound >= at + len + 4 * small.maxSize {
                #expect(afterSet.contains("\(r)"), "chunk \(r) lost after \(kind) at \(at), seed \(rng.seed)")
            }
        }
    }

    @Test func standardChunkerSizes() {
        var rng = SeededRandom.forTest("chunker.standard")
        let data = rng.bytes(3 << 20)
        let ranges = Chunker.standard.chunkRanges(of: data)
        #expect(ranges.dropLast().allSatisfy { $0.count >= 8 << 10 && $0.count <= 128 << 10 })
        let m = Manifest.of(data)
        #expect(m.size == data.count)
        #expect(m.chunks.reduce(0) { $0 + $1.size } == data.count)
        #expect(m.hash == Manifest.contentHash(of: m.chunks) && m.isConsistent)
        #expect(m.chunks.count > 1 && m.hash != ContentHash.of(data), "a file's hash is its chunk list's, not the bytes' SHA-256")
    }

    @Test func emptyInputHasNoChunks() {
        #expect(small.chunkRanges(of: []).isEmpty)
        let m = Manifest.of([])
        #expect(m.chunks.isEmpty && m.size == 0 && m.hash == .empty)
        #expect(ContentHash.empty.hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }
}

@Suite("Manifest deltas")
struct ManifestDeltaTests {
    @Test func deltasRebuildTheManifestAndStaySmallForSmallEdits() throws {
        var rng = SeededRandom.forTest("manifest.delta")
        let chunker = Chunker(minSize: 2048, avgSize: 8192, maxSize: 32768)
        for _ in 0..<40 {
            let data = rng.bytes(Int.random(in: 0...600_000, using: &rng))
            var edited = data
            let at = data.isEmpty ? 0 : Int.random(in: 0..<data.count, using: &rng)
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: edited.insert(contentsOf: rng.bytes(Int.random(in: 1...100, using: &rng)), at: at)
            case 1: if !data.isEmpty { edited.removeSubrange(at..<min(data.count, at + 50)) }
            default: edited += rng.bytes(Int.random(in: 0...100_000, using: &rng))
            }
            let base = Manifest.of(data, chunker: chunker), new = Manifest.of(edited, chunker: chunker)
            let d = ManifestDelta.make(base: VersionID(uuid: UUID()), baseChunks: base.chunks, new: new)
            #expect(try d.apply(baseChunks: base.chunks) == new, "seed \(rng.seed)")
            let literal = d.pieces.filter { if case .chunk = $0 { true } else { false } }.count
            #expect(literal <= new.chunks.count - base.chunks.count + 12, "seed \(rng.seed)")
            // Applied to another base, it is refused rather than producing a wrong manifest.
            if let copied = d.pieces.compactMap({ if case .copy(let from, _) = $0 { from } else { nil } }).first {
                var other = base.chunks
                other[copied] = ChunkRef(hash: .empty, size: other[copied].size)
                #expect(throws: CoreError.self, "seed \(rng.seed)") { try d.apply(baseChunks: other) }
            }
        }
        #expect(throws: CoreError.self) {
            try ManifestDelta(base: VersionID(uuid: UUID()), pieces: [.copy(from: 5, count: 2)], size: 0, hash: .empty, digest: .empty).apply(baseChunks: [])
        }
    }
}

/// The manifest's wire form: the chunk list as one `HASH:SIZE,…` string, the earlier array of
/// objects still read, and anything else refused without a crash.
@Suite("Manifest wire form")
struct ManifestCodingTests {
    @Test func roundTripsEarlierFormAndHostileLists() throws {
        var rng = SeededRandom.forTest("manifest.coding")
        for round in 0..<300 {
            let chunks = (0..<Int.random(in: 0...40, using: &rng)).map { _ in
                ChunkRef(hash: ContentHash.of(rng.bytes(8)), size: Int.random(in: 1...ChunkRef.maxSize, using: &rng))
            }
            let m = Manifest(chunks: chunks, size: chunks.reduce(0) { $0 + $1.size }, hash: ContentHash.of(rng.bytes(8)))
            let data = try JSONEncoder().encode(m)
            #expect(try JSONDecoder().decode(Manifest.self, from: data) == m, "round \(round)")
            #expect(Manifest.parseChunkList(Manifest.chunkList(chunks)) == chunks)
            // The earlier form: an array of {"hash", "size"} objects.
            let legacy = "{\"chunks\":[" + chunks.map { "{\"hash\":\"\($0.hash.hex)\",\"size\":\($0.size)}" }.joined(separator: ",")
                + "],\"size\":\(m.size),\"hash\":\"\(m.hash.hex)\"}"
            #expect(try JSONDecoder().decode(Manifest.self, from: Data(legacy.utf8)) == m)
            // A mutated list is either refused or still a well-formed list, never a crash.
            var bytes = Array(Manifest.chunkList(chunks).utf8)
            if !bytes.isEmpty {
                for _ in 0..<Int.random(in: 1...3, using: &rng) {
                    let i = Int.random(in: 0..<bytes.count, using: &rng)
                    switch Int.random(in: 0..<3, using: &rng) {
                    case 0: bytes[i] = [UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "x"), UInt8(ascii: "0"), 0xFF][Int.random(in: 0..<5, using: &rng)]
                    case 1: bytes.remove(at: i)
                    default: bytes.insert(UInt8(ascii: ","), at: i)
                    }
                    if bytes.isEmpty { break }
                }
                if let parsed = Manifest.parseChunkList(String(decoding: bytes, as: UTF8.self)) {
                    #expect(parsed.allSatisfy { $0.size > 0 })
                }
            }
        }
        for bad in [",", "abc:1", String(repeating: "a", count: 64) + ":0", String(repeating: "a", count: 64) + ":", String(repeating: "a", count: 64) + ":12,",
                    String(repeating: "a", count: 64) + ":99999999999", String(repeating: "g", count: 64) + ":5",
                    String(repeating: "a", count: 64) + ":\(ChunkRef.maxSize + 1)", String(repeating: "a", count: 64) + ":9999999999"] {
            #expect(Manifest.parseChunkList(bad) == nil, "\(bad)")
        }
    }
}
