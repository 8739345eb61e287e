import Foundation

/// Reads a ListObjectsV2 answer (XML) without an XML library: the `<Contents>` entries' key,
/// size and last-modified time, whether the listing is cut short and where it goes on. Anything
/// it does not understand is skipped; it never traps on what a store sends.
enum S3Listing {
    struct Page {
        var objects: [S3Client.Listed] = []
        var truncated = false
        var next: String?
    }

    static func parse(_ body: [UInt8]) -> Page {
        let text = String(decoding: body, as: UTF8.self)
        var page = Page()
        page.truncated = element("IsTruncated", in: text[...]) == "true"
        page.next = element("NextContinuationToken", in: text[...]).map(unescape)
        var rest = text[...]
        while let open = rest.range(of: "<Contents>"), let close = rest.range(of: "</Contents>", range: open.upperBound..<rest.endIndex) {
            let entry = rest[open.upperBound..<close.lowerBound]
            if let key = element("Key", in: entry).map(unescape), let size = element("Size", in: entry).flatMap({ Int64($0) }), size >= 0 {
                page.objects.append(S3Client.Listed(key: key, size: size, modified: element("LastModified", in: entry).flatMap(date)))
            }
            rest = rest[close.upperBound...]
        }
        return page
    }

    static func element(_ name: String, in text: Substring) -> String? {
        guard let open = text.range(of: "<\(name)>"), let close = text.range(of: "</\(name)>", range: open.upperBound..<text.endIndex) else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
    }

    static func unescape(_ s: String) -> String {
        guard s.contains("&") else { return s }
        return s.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
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
