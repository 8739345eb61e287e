import ArgumentParser
import Foundation
import UbiqCore
import UbiqEngine

/// Chunker throughput next to SHA-256 on the same data.
struct ChunkerBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "chunker", abstract: "FastCDC chunking and SHA-256 throughput in MB/s.")

    @Option(help: "Buffer size in MiB.") var mib = 256
    @Option(help: "Repetitions (the median is reported).") var runs = 5

    func run() {
        var state: UInt64 = 0x1234_5678
        let n = mib << 20
        var data = [UInt8](repeating: 0, count: n)
        data.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt64.self)
            for i in 0..<words.count {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                words[i] = z ^ (z >> 27)
            }
        }
        let chunker = Chunker.standard
        let clock = ContinuousClock()
        var cut: [Double] = [], hash: [Double] = [], both: [Double] = [], sealed: [Double] = [], opened: [Double] = []
        let naming = ChunkNaming(cipher: AccountKey.generate().keys(for: try! ContainerID(validating: "bench.chunker")).chunks)
        var count = 0
        for _ in 0..<runs {
            var ranges: [Range<Int>] = []
            cut.append(seconds(clock.measure { ranges = chunker.chunkRanges(of: data) }))
            count = ranges.count
            hash.append(seconds(clock.measure { _ = data.withUnsafeBytes { ContentHash.of(buffer: $0) } }))
            both.append(seconds(clock.measure { _ = Manifest.of(data) }))
            // An encrypted account's naming: each chunk sealed (AES-GCM-SIV), the sealed bytes hashed.
            sealed.append(seconds(clock.measure { _ = Manifest.of(data, chunker: chunker.named(naming)) }))
            let one = Array(data.prefix(32 << 10)), box = naming.cipher!.seal(one)
            opened.append(seconds(clock.measure { for _ in 0..<(n >> 15) { _ = box.withUnsafeBytes { try? naming.cipher!.open($0) } } }))
        }
        let mb = Double(n) / 1e6
        print(String(format: "data %d MiB, %d chunks, mean chunk %.1f KiB", mib, count, Double(n) / Double(max(count, 1)) / 1024))
        print(String(format: "chunking (FastCDC)          %8.0f MB/s", mb / median(cut)))
        print(String(format: "SHA-256 whole buffer        %8.0f MB/s", mb / median(hash)))
        print(String(format: "manifest (chunk+hash each+whole) %5.0f MB/s", mb / median(both)))
        print(String(format: "manifest, encrypted account  %7.0f MB/s (each chunk sealed, then hashed)", mb / median(sealed)))
        print(String(format: "opening sealed 32 KiB chunks %7.0f MB/s", mb / median(opened)))

        // The engine's reader on a file (page cache warm): cut and hashed in parts on every core.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ubiq-chunker-\(getpid()).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        do { try Data(data).write(to: file) } catch { print("cannot write \(file.path): \(error)"); return }
        var fromFile: [Double] = []
        for _ in 0..<runs { fromFile.append(seconds(clock.measure { _ = try? FileManifest.read(path: file.path) })) }
        print(String(format: "manifest of a file (engine)  %7.0f MB/s", mb / median(fromFile)))
    }
}
