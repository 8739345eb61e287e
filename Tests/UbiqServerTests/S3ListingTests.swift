import Foundation
import Testing
@testable import UbiqStorage
import UbiqTesting

/// The bucket listing and error answers are read from network bytes with an XML parser: a real
/// answer's objects come out right, and damaged or hostile answers are refused or read in part —
/// never a trap, a hang, or an object with a negative size.
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

    /// `UBIQ_FUZZ_RUNS` makes a longer run (3,000 by default).
    static let fuzzRuns = ProcessInfo.processInfo.environment["UBIQ_FUZZ_RUNS"].flatMap { Int($0) } ?? 3_000

    @Test func aRealAnswerIsReadRight() throws {
        let page = try S3Listing.parse(Array(Self.sample.utf8))
        #expect(page.truncated && page.next == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
        #expect(page.objects.map(\.key) == ["packs/a&b", "packs/c"])
        #expect(page.objects.map(\.size) == [1234, 0])
        #expect(page.objects[0].modified == Date(timeIntervalSince1970: 1_795_759_200))
        #expect(page.objects[1].modified == Date(timeIntervalSince1970: 1_795_759_201))
    }

    @Test func anErrorAnswersCodeIsRead() {
        let body = Array(#"<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The key &lt;x&gt;</Message></Error>"#.utf8)
        #expect(S3Listing.errorCode(body) == "NoSuchKey")
        #expect(S3Listing.errorCode(Array("<html>502 Bad Gateway</html>".utf8)) == nil)
        #expect(S3Listing.errorCode(Array("not xml at all".utf8)) == nil)
        #expect(S3Listing.errorCode(Array("<Error><Co".utf8) + [0xE6] + Array("de>x</Code></Error>".utf8)) == nil, "a name that is not UTF-8 is refused, not a trap")
    }

    @Test func anAnswerThatIsNotAListingIsAnErrorNotAnEmptyListing() {
        #expect(throws: (any Error).self) { _ = try S3Listing.parse(Array("<html>502 Bad Gateway".utf8)) }
        #expect(throws: (any Error).self) { _ = try S3Listing.parse([]) }
        // A billion-laughs document is not expanded (libxml2's entity limits), nor made into objects.
        let laughs = #"<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;"><!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;"><!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">]><ListBucketResult><Contents><Key>&h;</Key><Size>1</Size></Contents></ListBucketResult>"#
        let page = try? S3Listing.parse(Array(laughs.utf8))
        #expect((page?.objects.first?.key.utf8.count ?? 0) < 1_000_000, "entities are not expanded past a bound")
    }

    @Test func damagedAnswersNeverTrap() {
        var rng = SeededRandom.forTest("fuzz.s3-listing")
        let base = Array(Self.sample.utf8)
        let pieces = ["<Contents>", "</Contents>", "<Key>", "</Key>", "<Size>", "</Size>", "-1", "99999999999999999999999", "&amp;", "<", ">", "\u{0}", "é"]
        var parsed = 0, refused = 0
        for _ in 0..<Self.fuzzRuns {
            var bytes = base
            for _ in 0..<Int.random(in: 1...12, using: &rng) {
                switch Int.random(in: 0..<4, using: &rng) {
                case 0 where !bytes.isEmpty: bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                case 1 where !bytes.isEmpty: bytes.removeSubrange(Int.random(in: 0..<bytes.count, using: &rng)..<bytes.count)
                case 2: bytes.insert(contentsOf: Array(pieces.randomElement(using: &rng)!.utf8), at: Int.random(in: 0...bytes.count, using: &rng))
                default: bytes = Array(bytes.shuffled(using: &rng).prefix(Int.random(in: 0...bytes.count, using: &rng)))
                }
            }
            guard let page = try? S3Listing.parse(bytes) else { refused += 1; continue }
            #expect(page.objects.allSatisfy { $0.size >= 0 && !$0.key.isEmpty })
            parsed += page.objects.count
            _ = S3Listing.errorCode(bytes)
        }
        #expect(refused > 0 && refused < Self.fuzzRuns, "some damaged answers are refused, some still read: \(refused) refused")
        print("[fuzz.s3-listing] \(Self.fuzzRuns) damaged answers: \(refused) refused, \(parsed) objects read from the rest")
    }
}
