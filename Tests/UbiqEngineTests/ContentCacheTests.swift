import Foundation
import Testing
import UbiqCore
@testable import UbiqEngine

/// What the engine keeps of file contents between a scan and its uploads (`ContentCache`):
/// never more bytes than its limit, bytes handed out once, manifests found by stamp or content.
@Suite("Content cache")
struct ContentCacheTests {
    static func stamp(_ n: UInt64) -> FileStamp { FileStamp(inode: n, size: Int64(n), mtimeNanos: 1, ctimeNanos: 1) }

    @Test func keptBytesStayUnderTheLimitAndAreHandedOutOnce() {
        var c = ContentCache()
        let mib = [UInt8](repeating: 7, count: 1 << 20)
        var keptCount = 0
        for n in 0..<100 where c.keep(mib, for: Self.stamp(UInt64(n))) { keptCount += 1 }
        #expect(keptCount == ContentCache.keptLimit >> 20, "kept \(keptCount) MiB")
        #expect(c.keptBytes == ContentCache.keptLimit)
        #expect(c.takeKept(for: Self.stamp(0)) == mib)
        #expect(c.takeKept(for: Self.stamp(0)) == nil, "handed out twice")
        #expect(c.keptBytes == ContentCache.keptLimit - mib.count)
        // Kept again for the same stamp: counted once.
        let again = c.keep([1, 2, 3], for: Self.stamp(1)), replaced = c.keep([4], for: Self.stamp(1))
        #expect(again && replaced && c.keptBytes == ContentCache.keptLimit - 2 * mib.count + 1)
        c.dropKept()
        #expect(c.keptBytes == 0 && c.takeKept(for: Self.stamp(2)) == nil)
    }

    @Test func manifestsAreFoundByStampAndByContentAndTrimmed() {
        var c = ContentCache()
        let m = Manifest.of([UInt8](repeating: 3, count: 10_000))
        c.note(m, for: Self.stamp(5))
        #expect(c.manifest(for: Self.stamp(5))?.hash == m.hash)
        #expect(c.stamp(ofContent: m.hash)?.stamp == Self.stamp(5))
        #expect(c.stamp(ofContent: .empty) == nil)
        for n in 0...UInt64(ContentCache.manifestLimit) { c.note(m, for: Self.stamp(100 + n)) }
        c.trim()
        #expect(c.manifest(for: Self.stamp(5)) == nil, "past the limit, all are dropped")
        c.note(m, for: Self.stamp(6))
        c.forgetManifests()
        #expect(c.manifest(for: Self.stamp(6)) == nil)
    }
}
