import Foundation

/// One token of predicate text, with its 1-based column.
struct QueryPredicateToken: Equatable {
    enum Kind: Equatable {
        case word(String)          // identifiers and keywords
        case string(String)        // quoted
        case number(Double)        // with any size unit applied
        case relativeDate(Double)  // seconds, e.g. -7d
        case symbol(String)        // == != < <= > >= ( ) [ ] && || !
        case end
    }
    var kind: Kind
    var column: Int
}

/// Turns predicate text into tokens; errors name the column.
struct QueryPredicateLexer {
    let chars: [Character]
    var i = 0

    init(_ text: String) { chars = Array(text) }

    static let maxLength = 4096

    mutating func tokens() throws -> [QueryPredicateToken] {
        guard chars.count <= Self.maxLength else { throw QueryPredicateError(column: Self.maxLength, message: "the predicate is longer than \(Self.maxLength) characters") }
        var out: [QueryPredicateToken] = []
        while true {
            while i < chars.count, chars[i].isWhitespace { i += 1 }
            let col = i + 1
            guard i < chars.count else { out.append(QueryPredicateToken(kind: .end, column: col)); return out }
            let c = chars[i]
            if c == "'" || c == "\"" || c == "‘" || c == "“" {
                out.append(QueryPredicateToken(kind: .string(try quoted(close: c == "‘" ? "’" : c == "“" ? "”" : c)), column: col))
            } else if c.isNumber || ((c == "-" || c == "+") && i + 1 < chars.count && chars[i + 1].isNumber) {
                out.append(QueryPredicateToken(kind: try numberLike(), column: col))
            } else if c.isLetter || c == "_" || c == "$" {
                var w = ""
                while i < chars.count, chars[i].isLetter || chars[i].isNumber || chars[i] == "_" || chars[i] == "$" { w.append(chars[i]); i += 1 }
                out.append(QueryPredicateToken(kind: .word(w), column: col))
            } else {
                let two = i + 1 < chars.count ? String([c, chars[i + 1]]) : ""
                if ["==", "!=", "<=", ">=", "<>", "=>", "=<", "&&", "||"].contains(two) {
                    let canonical = ["<>": "!=", "=>": ">=", "=<": "<="][two] ?? two
                    out.append(QueryPredicateToken(kind: .symbol(canonical), column: col))
                    i += 2
                } else if "=<>()[]!".contains(c) {
                    out.append(QueryPredicateToken(kind: .symbol(c == "=" ? "==" : String(c)), column: col))
                    i += 1
                } else {
                    throw QueryPredicateError(column: col, message: "unexpected character '\(c)'")
                }
            }
        }
    }

    mutating func quoted(close: Character) throws -> String {
        let start = i + 1
        i += 1
        var s = ""
        while i < chars.count {
            let c = chars[i]
            if c == "\\", i + 1 < chars.count { s.append(chars[i + 1]); i += 2; continue }
            if c == close { i += 1; return s }
            s.append(c)
            i += 1
        }
        throw QueryPredicateError(column: start, message: "a quoted string is not closed")
    }

    /// Numbers (`42`, `1.5`, `-3`), sizes (`10MB`, `2GiB`) and relative dates (`-7d`, `-12h`, `+30m`, `-2w`, `-10s`).
    mutating func numberLike() throws -> QueryPredicateToken.Kind {
        let col = i + 1
        var sign = 1.0
        var signed = false
        if chars[i] == "-" || chars[i] == "+" { sign = chars[i] == "-" ? -1 : 1; signed = true; i += 1 }
        var digits = ""
        while i < chars.count, chars[i].isNumber || chars[i] == "." || chars[i] == "_" { if chars[i] != "_" { digits.append(chars[i]) }; i += 1 }
        var unit = ""
        while i < chars.count, chars[i].isLetter { unit.append(chars[i]); i += 1 }
        guard let n = Double(digits), n.isFinite else { throw QueryPredicateError(column: col, message: "'\(digits)' is not a number") }
        let relative: [String: Double] = ["s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604_800]
        if signed, let mult = relative[unit] { return .relativeDate(sign * n * mult) }
        if unit.isEmpty { return .number(sign * n) }
        do {
            let bytes = try ByteSize.parse(digits + unit)
            return .number(sign * Double(bytes))
        } catch {
            throw QueryPredicateError(column: col, message: "unknown unit '\(unit)' (sizes: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB; relative dates: -30s, -5m, -2h, -7d, -1w)")
        }
    }
}

/// Recursive-descent parser: `OR` binds loosest, then `AND`, then `NOT`; comparisons are
/// `attribute operator[c] value`. Types are checked here so evaluation never fails.
struct QueryPredicateParser {
    let text: String
    var tokens: [QueryPredicateToken] = []
    var pos = 0
    var depth = 0

    init(text: String) { self.text = text }

    mutating func parseAll() throws -> QueryPredicate {
        var lexer = QueryPredicateLexer(text)
        tokens = try lexer.tokens()
        if case .end = tokens[0].kind { throw QueryPredicateError(column: 1, message: "the predicate is empty") }
        let p = try parseOr()
        guard case .end = peek.kind else { throw QueryPredicateError(column: peek.column, message: "unexpected \(describe(peek)) after a complete predicate") }
        return p
    }

    var peek: QueryPredicateToken { tokens[pos] }

    mutating func advance() -> QueryPredicateToken { let t = tokens[pos]; if pos < tokens.count - 1 { pos += 1 }; return t }

    func describe(_ t: QueryPredicateToken) -> String {
        switch t.kind {
        case .word(let w): "'\(w)'"
        case .string(let s): "the string '\(s.prefix(30))'"
        case .number(let n): "the number \(n)"
        case .relativeDate: "a relative date"
        case .symbol(let s): "'\(s)'"
        case .end: "the end"
        }
    }

    func isKeyword(_ t: QueryPredicateToken, _ words: String...) -> Bool {
        if case .word(let w) = t.kind { return words.contains(w.uppercased()) }
        return false
    }

    func isSymbol(_ t: QueryPredicateToken, _ s: String) -> Bool { t.kind == .symbol(s) }

    mutating func parseOr() throws -> QueryPredicate {
        var left = try parseAnd()
        while isKeyword(peek, "OR") || isSymbol(peek, "||") {
            _ = advance()
            left = .or(left, try parseAnd())
        }
        return left
    }

    mutating func parseAnd() throws -> QueryPredicate {
        var left = try parseNot()
        while isKeyword(peek, "AND") || isSymbol(peek, "&&") {
            _ = advance()
            left = .and(left, try parseNot())
        }
        return left
    }

    mutating func parseNot() throws -> QueryPredicate {
        if isKeyword(peek, "NOT") || isSymbol(peek, "!") {
            _ = advance()
            return .not(try nested { try $0.parseNot() })
        }
        return try parsePrimary()
    }

    mutating func nested(_ body: (inout QueryPredicateParser) throws -> QueryPredicate) throws -> QueryPredicate {
        depth += 1
        defer { depth -= 1 }
        guard depth < 64 else { throw QueryPredicateError(column: peek.column, message: "the predicate nests too deeply") }
        return try body(&self)
    }

    mutating func parsePrimary() throws -> QueryPredicate {
        let t = peek
        if isSymbol(t, "(") {
            _ = advance()
            let inner = try nested { try $0.parseOr() }
            guard isSymbol(peek, ")") else { throw QueryPredicateError(column: peek.column, message: "expected ')' to close the '(' at column \(t.column), found \(describe(peek))") }
            _ = advance()
            return inner
        }
        if isKeyword(t, "TRUEPREDICATE") { _ = advance(); return .always(true) }
        if isKeyword(t, "FALSEPREDICATE") { _ = advance(); return .always(false) }
        guard case .word(let w) = t.kind else {
            throw QueryPredicateError(column: t.column, message: "expected an attribute (e.g. name, size, status), found \(describe(t))")
        }
        guard let attr = QueryPredicate.Attribute.allCases.first(where: { $0.rawValue.lowercased() == w.lowercased() }) else {
            throw QueryPredicateError(column: t.column, message: "unknown attribute '\(w)' (known: \(QueryPredicate.Attribute.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        _ = advance()
        let opToken = peek
        let op: QueryPredicate.Operator
        switch opToken.kind {
        case .symbol(let s) where QueryPredicate.Operator(rawValue: s) != nil: op = QueryPredicate.Operator(rawValue: s)!
        case .word(let k) where QueryPredicate.Operator(rawValue: k.uppercased())?.isStringOperator == true: op = QueryPredicate.Operator(rawValue: k.uppercased())!
        default: throw QueryPredicateError(column: opToken.column, message: "expected an operator after '\(w)' (== != < <= > >= LIKE CONTAINS BEGINSWITH ENDSWITH), found \(describe(opToken))")
        }
        _ = advance()
        var ci = false
        if isSymbol(peek, "[") {
            let open = advance()
            guard case .word(let m) = peek.kind, m.lowercased() == "c" else {
                throw QueryPredicateError(column: peek.column, message: "expected the modifier [c] (case-insensitive) at column \(open.column)")
            }
            ci = m.lowercased().contains("c")
            _ = advance()
            guard isSymbol(peek, "]") else { throw QueryPredicateError(column: peek.column, message: "expected ']' to close the modifier") }
            _ = advance()
        }
        let valueToken = peek
        let value = try parseValue(for: attr, op: op)
        try check(attr, op, value, at: valueToken.column, opColumn: opToken.column)
        return .compare(attr, op, value, caseInsensitive: ci)
    }

    mutating func parseValue(for attr: QueryPredicate.Attribute, op: QueryPredicate.Operator) throws -> QueryPredicate.Value {
        let t = advance()
        switch t.kind {
        case .string(let s):
            if attr.type == .date {
                guard let d = KVDateFormat.parse(s) ?? Self.day(s) else {
                    throw QueryPredicateError(column: t.column, message: "'\(s.prefix(40))' is not an ISO-8601 date (e.g. '2026-11-22' or '2026-11-22T10:00:00Z')")
                }
                return .date(d)
            }
            return .string(s)
        case .number(let n): return .number(n)
        case .relativeDate(let s): return .relativeDate(s)
        case .word(let w):
            switch w.lowercased() {
            case "true", "yes": return .bool(true)
            case "false", "no": return .bool(false)
            case "nil", "null": return .null
            default:
                // Bare words are enumeration values: status == notDownloaded, kind == folder.
                if attr == .status || attr == .kind { return .string(w) }
                throw QueryPredicateError(column: t.column, message: "expected a value, found '\(w)' (quote strings: '\(w)')")
            }
        case .end: throw QueryPredicateError(column: t.column, message: "expected a value after the operator, found the end")
        default: throw QueryPredicateError(column: t.column, message: "expected a value, found \(describe(t))")
        }
    }

    /// Rejects comparisons that can never make sense, naming where.
    func check(_ attr: QueryPredicate.Attribute, _ op: QueryPredicate.Operator, _ value: QueryPredicate.Value, at column: Int, opColumn: Int) throws {
        func fail(_ m: String) throws -> Never { throw QueryPredicateError(column: column, message: m) }
        if op.isStringOperator && attr.type != .string { throw QueryPredicateError(column: opColumn, message: "\(op.rawValue) needs a text attribute; '\(attr.rawValue)' is a \(attr.type)") }
        switch (attr.type, value) {
        case (_, .null):
            guard op == .equal || op == .notEqual else { try fail("nil can only be compared with == or !=") }
        case (.string, .string(let s)):
            if attr == .status, MetadataItem.Status(rawValue: s) == nil {
                try fail("unknown status '\(s)' (notDownloaded, downloaded, current)")
            }
            if attr == .kind, ItemKind(rawValue: s) == nil { try fail("unknown kind '\(s)' (file, folder)") }
        case (.number, .number): break
        case (.bool, .bool):
            guard op == .equal || op == .notEqual else { throw QueryPredicateError(column: opColumn, message: "'\(attr.rawValue)' is true or false: compare it with == or !=") }
        case (.date, .date), (.date, .relativeDate): break
        default:
            try fail("'\(attr.rawValue)' is a \(attr.type); this value is not")
        }
    }

    /// `2026-11-22` as midnight UTC.
    static func day(_ s: String) -> Date? {
        let parts = s.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3, s.count == 10 else { return nil }
        var c = DateComponents()
        c.year = parts[0]; c.month = parts[1]; c.day = parts[2]
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "UTC")!
        return cal.date(from: c)
    }
}
