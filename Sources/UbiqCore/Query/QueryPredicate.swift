import Foundation

/// A parsed metadata-query predicate (product §5): a readable subset of `NSPredicate`.
public indirect enum QueryPredicate: Sendable, Equatable, CustomStringConvertible {
    case always(Bool)
    case not(QueryPredicate)
    case and(QueryPredicate, QueryPredicate)
    case or(QueryPredicate, QueryPredicate)
    case compare(Attribute, Operator, Value, caseInsensitive: Bool)

    /// The attributes a predicate can name (the item attributes of §5).
    public enum Attribute: String, Sendable, CaseIterable {
        case path, name, itemID, kind, size, created, modified, status, downloading, percentDownloaded,
             uploading, uploaded, percentUploaded, conflict, excluded, downloadError, uploadError, pinned

        public enum ValueType: Sendable { case string, number, bool, date }

        public var type: ValueType {
            switch self {
            case .path, .name, .itemID, .kind, .status, .downloadError, .uploadError: .string
            case .size, .percentDownloaded, .percentUploaded: .number
            case .downloading, .uploading, .uploaded, .conflict, .excluded, .pinned: .bool
            case .created, .modified: .date
            }
        }
    }

    public enum Operator: String, Sendable, CaseIterable {
        case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
        case like = "LIKE", contains = "CONTAINS", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH"

        public var isStringOperator: Bool { [.like, .contains, .beginsWith, .endsWith].contains(self) }
    }

    /// A literal. Relative dates stay relative until evaluated (against an injected "now").
    public enum Value: Sendable, Equatable, CustomStringConvertible {
        case string(String)
        case number(Double)
        case bool(Bool)
        case date(Date)
        /// Seconds relative to now (negative: in the past), e.g. `-7d`.
        case relativeDate(TimeInterval)
        case null

        public var description: String {
            switch self {
            case .string(let s): return "'" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
            case .number(let n): return n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
            case .bool(let b): return b ? "true" : "false"
            case .date(let d): return "'" + KVDateFormat.format(d) + "'"
            case .relativeDate(let s): return (s < 0 ? "-" : "+") + String(Int64(abs(s))) + "s"
            case .null: return "nil"
            }
        }
    }

    public var description: String {
        switch self {
        case .always(let b): return b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let p): return "NOT (\(p))"
        case .and(let a, let b): return "(\(a)) AND (\(b))"
        case .or(let a, let b): return "(\(a)) OR (\(b))"
        case .compare(let a, let op, let v, let ci): return "\(a.rawValue) \(op.rawValue)\(ci ? "[c]" : "") \(v)"
        }
    }

    /// Parses predicate text; a malformed predicate throws ``QueryPredicateError`` naming the position.
    public static func parse(_ text: String) throws -> QueryPredicate {
        var p = QueryPredicateParser(text: text)
        return try p.parseAll()
    }

    /// True when the result depends on the time (a relative date such as `-7d`).
    public var usesRelativeDates: Bool {
        switch self {
        case .always: false
        case .not(let p): p.usesRelativeDates
        case .and(let a, let b), .or(let a, let b): a.usesRelativeDates || b.usesRelativeDates
        case .compare(_, _, let v, _): if case .relativeDate = v { true } else { false }
        }
    }

    // MARK: evaluation

    /// Whether an item matches, with relative dates taken from `now`.
    public func matches(_ item: MetadataItem, now: Date) -> Bool {
        switch self {
        case .always(let b): return b
        case .not(let p): return !p.matches(item, now: now)
        case .and(let a, let b): return a.matches(item, now: now) && b.matches(item, now: now)
        case .or(let a, let b): return a.matches(item, now: now) || b.matches(item, now: now)
        case .compare(let attr, let op, let value, let ci): return Self.compare(attr, op, value, ci, item, now)
        }
    }

    static func compare(_ attr: Attribute, _ op: Operator, _ value: Value, _ ci: Bool, _ item: MetadataItem, _ now: Date) -> Bool {
        switch attr.type {
        case .string:
            let s: String?
            switch attr {
            case .path: s = item.path.string
            case .name: s = item.name
            case .itemID: s = item.itemID.description
            case .kind: s = item.kind.rawValue
            case .status: s = item.status.rawValue
            case .downloadError: s = item.downloadError
            default: s = item.uploadError
            }
            guard case .string(let v) = value else {
                if case .null = value { return op == .equal ? s == nil : op == .notEqual ? s != nil : false }
                return false
            }
            guard let s else { return op == .notEqual }
            return compareStrings(s, op, v, ci: ci || attr == .itemID)
        case .number:
            let n: Double
            switch attr {
            case .size: n = Double(item.size)
            case .percentDownloaded: n = item.percentDownloaded
            default: n = item.percentUploaded
            }
            guard case .number(let v) = value else { return false }
            return ordered(n, op, v)
        case .bool:
            let b: Bool
            switch attr {
            case .downloading: b = item.downloading
            case .uploading: b = item.uploading
            case .uploaded: b = item.uploaded
            case .conflict: b = item.conflict
            case .pinned: b = item.pinned
            default: b = item.excluded
            }
            guard case .bool(let v) = value else { return false }
            return op == .equal ? b == v : op == .notEqual ? b != v : false
        case .date:
            let d = attr == .created ? item.created : item.modified
            let v: Date
            switch value {
            case .date(let x): v = x
            case .relativeDate(let s): v = now.addingTimeInterval(s)
            case .null: return op == .equal ? d == nil : op == .notEqual ? d != nil : false
            default: return false
            }
            guard let d else { return false }
            return ordered(d.timeIntervalSince1970, op, v.timeIntervalSince1970)
        }
    }

    static func ordered<T: Comparable>(_ a: T, _ op: Operator, _ b: T) -> Bool {
        switch op {
        case .equal: a == b
        case .notEqual: a != b
        case .less: a < b
        case .lessOrEqual: a <= b
        case .greater: a > b
        case .greaterOrEqual: a >= b
        default: false
        }
    }

    static func compareStrings(_ s: String, _ op: Operator, _ v: String, ci: Bool) -> Bool {
        let a = ci ? s.lowercased() : s, b = ci ? v.lowercased() : v
        switch op {
        case .like: return Wildcard.matches(Array(a.unicodeScalars), Array(b.unicodeScalars))
        case .contains: return b.isEmpty || a.contains(b)
        case .beginsWith: return a.hasPrefix(b)
        case .endsWith: return a.hasSuffix(b)
        default: return ordered(a, op, b)
        }
    }
}

/// `LIKE` patterns: `*` any run of characters, `?` exactly one; `\` escapes.
enum Wildcard {
    static func matches(_ s: [Unicode.Scalar], _ p: [Unicode.Scalar]) -> Bool {
        // Iterative matcher with single backtrack point for '*' (linear in practice, no recursion).
        var si = 0, pi = 0
        var star = -1, mark = 0
        while si < s.count {
            if pi < p.count, p[pi] == "\\", pi + 1 < p.count, p[pi + 1] == s[si] {
                si += 1; pi += 2
            } else if pi < p.count, p[pi] != "*", p[pi] != "\\", p[pi] == "?" || p[pi] == s[si] {
                si += 1; pi += 1
            } else if pi < p.count, p[pi] == "*" {
                star = pi; mark = si; pi += 1
            } else if star >= 0 {
                pi = star + 1; mark += 1; si = mark
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}

/// A malformed predicate: the message names the position (1-based column, in characters).
public struct QueryPredicateError: Error, Sendable, Equatable, CustomStringConvertible {
    public let column: Int
    public let message: String
    public init(column: Int, message: String) { self.column = column; self.message = message }
    public var description: String { "predicate error at column \(column): \(message)" }
}
