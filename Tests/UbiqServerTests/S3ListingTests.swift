import Foundation
import Testing
@testable import UbiqStorage
import UbiqTesting

/// The bucket listing is read from network bytes without an XML library: a real answer's
/// objects come out right, and damaged or hostile answers never trap, hang or make up objects
/// with negative sizes.
@Suite("S3 listing parser")
struct S3ListingTests {
    static let sample = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>packs/</Prefix>\
        <KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated>\
        <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>\
        <Contents><Key>packs/a&amp;b</Key><LastModified>2026-11-27T06:00:00.000Z</LastModified><ETag>&quot;x&quot;</ETag><Size>1234</Size></Contents>\
        <Contents><Key>packs/c</Key><LastModified>2026-11-27T06:00:01Z</LastModified><Size>0</Size></Contents>\
        </ListBucketResult>
        """

    @Test func aRealAnswerIsReadRight() {
        let page = S3Listing.parse(Array(Self.sample.utf8))
        #expect(page.truncated && page.next == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
        #expect(page.objects.map(\.key) == ["packs/a&b", "packs/c"])
        #expect(page.objects.map(\.size) == [1234, 0])
        #expect(page.objects[0].modified == Date(timeIntervalSince1970: 1_795_759_200))
        #expect(page.objects[1].modified == Date(timeIntervalSince1970: 1_795_759_201))
    }

    @Test func damagedAnswersNeverTrap() {
        var rng = SeededRandom.forTest("fuzz.s3-listing")
        let base = Array(Self.sample.utf8)
        let pieces = ["<Contents>", "</Contents>", "<Key>", "</Key>", "<Size>", "</Size>", "-1", "99999999999999999999999", "&amp;", "<", ">", "\u{0}", "é"]
        var parsed = 0
        for _ in 0..<3_000 {
            var bytes = base
            for _ in 0..<Int.random(in: 1...12, using: &rng) {
                switch Int.random(in: 0..<4, using: &rng) {
                case 0 where !bytes.isEmpty: bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                case 1 where !bytes.isEmpty: bytes.removeSubrange(Int.random(in: 0..<bytes.count, using: &rng)..<bytes.count)
                case 2: bytes.insert(contentsOf: Array(pieces.randomElement(using: &rng)!.utf8), at: Int.random(in: 0...bytes.count, using: &rng))
                default: bytes = Array(bytes.shuffled(using: &rng).prefix(Int.random(in: 0...bytes.count, using: &rng)))
                }
            }
            let page = S3Listing.parse(bytes)
            #expect(page.objects.allSatisfy { $0.size >= 0 })
            parsed += page.objects.count
        }
        print("[fuzz.s3-listing] 3000 damaged answers, \(parsed) objects read from them")
    }
}
