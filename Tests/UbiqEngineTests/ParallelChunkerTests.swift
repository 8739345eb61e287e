import Foundation
import Testing
import UbiqCore
import UbiqEngine
import UbiqTesting

/// Chunking a file in parallel parts must give exactly the chunks of one pass from the start
/// (the file's hash is derived from them), however the parts are laid and scheduled.
@Suite("Parallel chunking")
struct ParallelChunkerTests {
    let small = Chunker(minSize: 256, avgSize: 1024, maxSize: 4096)

    /// Reads from an in-memory buffer, optionally in short pieces (as a file may).
    static func reader(_ data: [UInt8], piece: Int? = nil) -> Chunker.Reader {
        { offset, buffer in
            guard offset < data.count else { return 0 }
            let n = min(buffer.count, data.count - offset, piece ?? .max)
            data.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
            return n
        }
    }

    @Test func partsGiveTheChunksOfOnePass() throws {
        var rng = SeededRandom.forTest("chunker.parallel")
        for case_ in 0..<300 {
            let size = Int.random(in: 0...200_000, using: &rng)
            // Repetitive stretches too (long runs without a cut hit the maximum size).
            var data = rng.bytes(size)
            if size > 0, Bool.random(using: &rng) {
                let from = Int.random(in: 0..<size, using: &rng), len = min(size - from, Int.random(in: 0...40_000, using: &rng))
                for i in from..<from + len { data[i] = 7 }
            }
            let parts = Int.random(in: 1...6, using: &rng)
            let segment = Int.random(in: small.maxSize...(small.maxSize * 8), using: &rng)
            let piece = Bool.random(using: &rng) ? Int.random(in: 1...5000, using: &rng) : nil
            let got = try small.parallelChunks(size: size, parts: parts, segment: segment, read: Self.reader(data, piece: piece))
            let want = Manifest.of(data, chunker: small).chunks
            #expect(got == want, "case \(case_), seed \(rng.seed): size \(size), \(parts) parts, segment \(segment), piece \(piece ?? 0)")
        }
    }

    @Test func theStandardChunkerOnSeveralMegabytes() throws {
        var rng = SeededRandom.forTest("chunker.parallel.standard")
        let data = rng.bytes(9 << 20 + 12_345)
        let want = Manifest.of(data).chunks
        for parts in [2, 3, 4] {
            let got = try Chunker.standard.parallelChunks(size: data.count, parts: parts, segment: 1 << 20, read: Self.reader(data))
            #expect(got == want, "\(parts) parts, seed \(rng.seed)")
        }
    }

    @Test func aReadErrorIsThrown() {
        struct Broken: Error {}
        #expect(throws: Broken.self) {
            _ = try small.parallelChunks(size: 100_000, parts: 3, segment: 8192) { offset, _ in
                if offset > 60_000 { throw Broken() }
                return 0
            }
        }
    }
}
