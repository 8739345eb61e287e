import CFileSupport
import Foundation
import Testing
import UbiqTesting
#if canImport(Glibc)
import Glibc
#endif

/// The page-cache-bypassing writer and reader (`ubiq_writer`, `ubiq_read_aligned`) that downloads
/// and the server's pack reads go through: whatever the offsets and piece sizes, on a disk file system
/// (O_DIRECT) and on tmpfs (where they fall back to plain I/O if O_DIRECT is refused), the file
/// holds exactly what was written after what was kept, and spans read back exactly.
@Suite("Direct file I/O")
struct DirectIOTests {
    /// A folder on the disk (the temp folder) and one on tmpfs when the machine has /dev/shm.
    static func folders() throws -> [TempDirectory] {
        var out = [try TempDirectory("ubiq-directio")]
        if FileManager.default.fileExists(atPath: "/dev/shm") {
            let shm = URL(fileURLWithPath: "/dev/shm/ubiq-directio-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: shm, withIntermediateDirectories: true)
            out.append(TempDirectory(existing: shm))
        }
        return out
    }

    @Test func writtenAfterAKeptHeadAndReadBackInSpans() throws {
        var rng = SeededRandom.forTest("directio")
        for dir in try Self.folders() {
            defer { dir.remove() }
            var sawDirect = false
            for round in 0..<40 {
                let path = dir.url.appendingPathComponent("f\(round)").path
                // What a crashed download left: some bytes, of which the first `keep` stay.
                let old = rng.bytes(Int.random(in: 0...20_000, using: &rng))
                try Data(old).write(to: URL(fileURLWithPath: path))
                let keep = Int.random(in: 0...old.count, using: &rng)
                let fd = open(path, O_RDWR | O_CLOEXEC)
                #expect(fd >= 0)
                defer { close(fd) }
                let writer = try #require(ubiq_writer_open(fd, Int64(keep), Int.random(in: 1...64, using: &rng) << 10))
                defer { ubiq_writer_free(writer) }
                sawDirect = sawDirect || ubiq_writer_is_direct(writer) != 0
                var expected = Array(old[0..<keep])
                for _ in 0..<Int.random(in: 0...12, using: &rng) {
                    let scale = [1, 100, 4096, 70_000][Int.random(in: 0..<4, using: &rng)]
                    let piece = rng.bytes(Int.random(in: 1...scale, using: &rng))
                    let rc = piece.withUnsafeBytes { ubiq_writer_write(writer, $0.baseAddress, $0.count) }
                    #expect(rc == 0)
                    expected += piece
                }
                #expect(ubiq_writer_finish(writer) == 0)
                let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
                #expect(written == expected, "round \(round) in \(dir.path): \(written.count) bytes, expected \(expected.count)")

                // Spans anywhere, including past the end.
                let rfd = ubiq_open_direct(path)
                #expect(rfd >= 0)
                defer { close(rfd) }
                // Spans anywhere, read as the chunk store does: the whole blocks around them into
                // an aligned buffer, then sliced.
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: 40_960, alignment: 4096)
                defer { buffer.deallocate() }
                for _ in 0..<10 {
                    let off = Int.random(in: 0...expected.count + 100, using: &rng)
                    let len = Int.random(in: 1...30_000, using: &rng)
                    let start = off & ~4095, end = (off + len + 4095) & ~4095
                    let got = Int(ubiq_read_aligned(rfd, buffer, end - start, Int64(start)))
                    let n = min(len, max(0, got - (off - start)))
                    let read = n > 0 ? Array(UnsafeRawBufferPointer(start: buffer + (off - start), count: n)) : []
                    let want = off < expected.count ? Array(expected[off..<min(expected.count, off + len)]) : []
                    #expect(got >= 0 && read == want, "span \(off)+\(len) of \(expected.count)")
                }
            }
            print("[directio] \(dir.path): O_DIRECT \(sawDirect ? "used" : "refused by the file system; plain I/O")")
        }
    }

    /// A whole file from aligned memory (`ubiq_write_whole`, the server's packs): exactly the
    /// bytes up to `size`, none of the padding, on disk and on tmpfs.
    @Test func wholeFilesFromAlignedMemoryAreExactlyTheirSize() throws {
        var rng = SeededRandom.forTest("directio.whole")
        for dir in try Self.folders() {
            defer { dir.remove() }
            for round in 0..<30 {
                let size = [0, 1, 4095, 4096, 4097, 70_000, 1 << 20][round % 7] + (round >= 7 ? Int.random(in: 0...5000, using: &rng) : 0)
                let padded = max(4096, (size + 4095) / 4096 * 4096)
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: padded, alignment: 4096)
                defer { buffer.deallocate() }
                let bytes = rng.bytes(size)
                bytes.withUnsafeBytes { if size > 0 { buffer.copyMemory(from: $0.baseAddress!, byteCount: size) } }
                (buffer + size).initializeMemory(as: UInt8.self, repeating: 0, count: padded - size)
                let path = dir.url.appendingPathComponent("w\(round)").path
                let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                #expect(fd >= 0)
                #expect(ubiq_write_whole(fd, buffer, padded, Int64(size)) == 0)
                // The descriptor is left without O_DIRECT: an unaligned write still works.
                var one: UInt8 = 0x2A
                #expect(pwrite(fd, &one, 1, off_t(size)) == 1)
                #expect(ftruncate(fd, off_t(size)) == 0)
                close(fd)
                let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
                #expect(written == bytes, "round \(round) in \(dir.path): \(written.count) bytes, expected \(size)")
            }
        }
    }
}
