import Foundation
import XMLCoder

/// Reads the object store's XML answers with an XML parser (XMLCoder over libxml2): a
/// ListObjectsV2 page (the `<Contents>` entries' key, size and last-modified time, whether the
/// listing is cut short and where it goes on) and an error answer's `<Code>`. An entry it
/// cannot read (no key, a size that is not a non-negative number) is skipped; an answer that
/// is not UTF-8 XML is an error — never a trap, and never an empty listing made up from garbage.
enum S3Listing {
    struct Page {
        var objects: [S3Client.Listed] = []
        var truncated = false
        var next: String?
    }

    struct Unreadable: Error, CustomStringConvertible {
        let why: String
        var description: String { "the object store's answer is not a listing: \(why)" }
    }

    private struct ListBucketResult: Decodable {
        var isTruncated: String?
        var nextContinuationToken: String?
        var contents: [Entry]?
        enum CodingKeys: String, CodingKey { case isTruncated = "IsTruncated", nextContinuationToken = "NextContinuationToken", contents = "Contents" }
    }

    private struct Entry: Decodable {
        var key: String?
        var size: String?
        var lastModified: String?
        enum CodingKeys: String, CodingKey { case key = "Key", size = "Size", lastModified = "LastModified" }
    }

    private struct ErrorAnswer: Decodable {
        var code: String?
        enum CodingKeys: String, CodingKey { case code = "Code" }
    }

    static func decoder() -> XMLDecoder {
        let d = XMLDecoder()
        d.trimValueWhitespaces = false  // a key is what the store says, spaces and all
        return d
    }

    /// Foundation's XML parser traps on a name that is not UTF-8 (`ListBucketRes\u{E6}lt`, found by the
    /// fuzzer): an answer is UTF-8 before the parser sees it.
    static func utf8(_ body: [UInt8]) -> Data? { String(validating: body, as: UTF8.self) == nil ? nil : Data(body) }

    static func parse(_ body: [UInt8]) throws -> Page {
        guard let data = utf8(body) else { throw Unreadable(why: "not UTF-8") }
        let result: ListBucketResult
        do { result = try decoder().decode(ListBucketResult.self, from: data) } catch { throw Unreadable(why: "\(error)".prefix(200).description) }
        var page = Page()
        page.truncated = result.isTruncated?.trimmingCharacters(in: .whitespacesAndNewlines) == "true"
        page.next = result.nextContinuationToken.flatMap { $0.isEmpty ? nil : $0 }
        for e in result.contents ?? [] {
            guard let key = e.key, !key.isEmpty, let size = e.size.flatMap({ Int64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }), size >= 0 else { continue }
            page.objects.append(S3Client.Listed(key: key, size: size, modified: e.lastModified.flatMap { date($0.trimmingCharacters(in: .whitespacesAndNewlines)) }))
        }
        return page
    }

    /// The S3 error code in an error answer (`<Error><Code>NoSuchKey</Code>…</Error>`), if it has one.
    static func errorCode(_ body: [UInt8]) -> String? {
        guard let data = utf8(body), let code = (try? decoder().decode(ErrorAnswer.self, from: data))?.code?.trimmingCharacters(in: .whitespacesAndNewlines),
              !code.isEmpty else { return nil }
        return String(code.prefix(100))
    }

    /// `2026-11-27T06:00:00.000Z` (fractional seconds optional).
    static func date(_ s: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = f.date(from: s) { return d }
        f.formatOptions = [.withInternetDateTime]
        return f.date(from: s)
    }
}
