/// A line-based three-way merge of text (diff3, as `git merge-file` does it): the changes each
/// side made to a common base are both kept where they touch different lines; where both
/// sides changed the same lines differently the hunk is kept with both sides between markers.
/// Pure; bytes are kept exactly (line ends, tabs, a missing final newline).
public enum ThreeWayMerge {
    /// The result of a merge.
    public struct Result: Equatable, Sendable {
        /// The merged text.
        public var text: String
        /// How many hunks both sides changed differently (marked in `text`).
        public var conflicts: Int
    }

    /// Why texts could not be merged.
    public enum Failure: Error, Equatable, Sendable {
        /// One of the contents is not UTF-8 text (or holds a NUL byte).
        case notText
        /// The texts differ on too many lines to match line by line within the bound.
        case tooDifferent
    }

    /// The largest table of line pairs compared (after the common start and end are set aside).
    public static let maxCells = 16_000_000

    /// Merges `ours` and `theirs`, both changed from `base`; `oursLabel` and `theirsLabel` name
    /// the sides in conflict markers.
    public static func merge(base: [UInt8], ours: [UInt8], theirs: [UInt8], oursLabel: String, theirsLabel: String) throws(Failure) -> Result {
        guard let b = lines(base), let o = lines(ours), let t = lines(theirs) else { throw .notText }
        return try merge(base: b, ours: o, theirs: t, oursLabel: oursLabel, theirsLabel: theirsLabel)
    }

    /// The lines of a text, each with its line end; nil when it is not UTF-8 text.
    public static func lines(_ bytes: [UInt8]) -> [String]? {
        guard !bytes.contains(0), let s = String(validating: bytes, as: UTF8.self) else { return nil }
        var out: [String] = []
        var start = s.startIndex
        for i in s.indices where s[i] == "\n" || s[i] == "\r\n" {
            let next = s.index(after: i)
            out.append(String(s[start..<next]))
            start = next
        }
        if start < s.endIndex { out.append(String(s[start...])) }
        return out
    }

    /// Merges lines (each with its line end).
    public static func merge(base: [String], ours: [String], theirs: [String], oursLabel: String, theirsLabel: String) throws(Failure) -> Result {
        let toOurs = try matches(base, ours), toTheirs = try matches(base, theirs)
        var out: [String] = []
        var conflicts = 0
        var i = 0, j = 0, k = 0
        while i < base.count || j < ours.count || k < theirs.count {
            // Lines all three hold in step: kept as they are.
            if i < base.count, toOurs[i] == j, toTheirs[i] == k {
                out.append(base[i]); i += 1; j += 1; k += 1
                continue
            }
            // The next base line both sides kept ends the hunk.
            var ni = i
            while ni < base.count, toOurs[ni] == nil || toTheirs[ni] == nil { ni += 1 }
            let nj = ni < base.count ? toOurs[ni]! : ours.count, nk = ni < base.count ? toTheirs[ni]! : theirs.count
            let b = base[i..<ni], o = ours[j..<nj], t = theirs[k..<nk]
            if o.elementsEqual(b) {
                out += t
            } else if t.elementsEqual(b) || o.elementsEqual(t) {
                out += o
            } else {
                conflicts += 1
                let end = out.last.map(endsLine) ?? true ? "" : "\n"
                out.append(end + "<<<<<<< \(oursLabel)\n")
                out += o; if let l = o.last, !endsLine(l) { out.append("\n") }
                out.append("||||||| base\n")
                out += b; if let l = b.last, !endsLine(l) { out.append("\n") }
                out.append("=======\n")
                out += t; if let l = t.last, !endsLine(l) { out.append("\n") }
                out.append(">>>>>>> \(theirsLabel)\n")
            }
            i = ni; j = nj; k = nk
        }
        return Result(text: out.joined(), conflicts: conflicts)
    }

    /// True when a line ends with a line feed (`"\r\n"` is one Character: `hasSuffix("\n")`
    /// would say no).
    public static func endsLine(_ line: String) -> Bool { line.utf8.last == 0x0A }

    /// True when a text still holds a conflict marker line this merge writes.
    public static func hasMarkers(_ text: String) -> Bool {
        text.split(separator: "\n", omittingEmptySubsequences: false).contains { $0.hasPrefix("<<<<<<< ") || $0 == "=======" || $0.hasPrefix(">>>>>>> ") }
    }

    /// For each line of `a`, the line of `b` it is matched with in a longest common subsequence
    /// (the common start and end first; then a table, bounded by `maxCells`).
    static func matches(_ a: [String], _ b: [String]) throws(Failure) -> [Int?] {
        var m = [Int?](repeating: nil, count: a.count)
        var lo = 0
        while lo < a.count, lo < b.count, a[lo] == b[lo] { m[lo] = lo; lo += 1 }
        var ea = a.count, eb = b.count
        while ea > lo, eb > lo, a[ea - 1] == b[eb - 1] { ea -= 1; eb -= 1; m[ea] = eb }
        let n = ea - lo, w = eb - lo
        guard n > 0, w > 0 else { return m }
        guard n * w <= maxCells else { throw .tooDifferent }
        // lcs[x * (w + 1) + y]: the longest common subsequence of a[lo + x...] and b[lo + y...].
        var lcs = [Int32](repeating: 0, count: (n + 1) * (w + 1))
        for x in stride(from: n - 1, through: 0, by: -1) {
            for y in stride(from: w - 1, through: 0, by: -1) {
                lcs[x * (w + 1) + y] = a[lo + x] == b[lo + y] ? lcs[(x + 1) * (w + 1) + y + 1] + 1
                    : max(lcs[(x + 1) * (w + 1) + y], lcs[x * (w + 1) + y + 1])
            }
        }
        var x = 0, y = 0
        while x < n, y < w {
            if a[lo + x] == b[lo + y] { m[lo + x] = lo + y; x += 1; y += 1 } else if lcs[(x + 1) * (w + 1) + y] >= lcs[x * (w + 1) + y + 1] { x += 1 } else { y += 1 }
        }
        return m
    }
}
