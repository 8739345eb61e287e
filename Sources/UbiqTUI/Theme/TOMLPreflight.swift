/// A strict check of a theme file's TOML before the TOML library reads it.
///
/// The bundled parser (toml++ inside TOMLKit) aborts the whole process on some damaged input
/// instead of reporting it (`a = [ } ]`, a key that starts with a stray byte; found by the
/// theme fuzzer) and cannot be built without its assertions from this package. Themes use a
/// small part of TOML, so this reader accepts exactly that part — comments, `[table]` headers,
/// `key = value` with bare, quoted or dotted keys, strings of all four kinds, integers,
/// floats, booleans, dates and times (the settings document, `SettingsDocument`), arrays (over several lines, a trailing comma allowed) and one-line inline
/// tables, nested at most 32 deep — and refuses everything else with its line, before the
/// library sees it.
struct TOMLPreflight {
    struct Failure: Error { let line: Int; let message: String }

    private let b: [UInt8]
    private var i = 0
    private var line = 1
    private var depth = 0

    /// Nil when `text` is in the accepted part of TOML; else where and why it is not.
    static func check(_ text: String) -> Failure? {
        var p = TOMLPreflight(b: Array(text.utf8))
        do { try p.document(); return nil } catch let f as Failure { return f } catch { return Failure(line: p.line, message: "\(error)") }
    }

    private init(b: [UInt8]) { self.b = b }

    private var peek: UInt8? { i < b.count ? b[i] : nil }
    private func fail(_ m: String) -> Failure { Failure(line: line, message: m) }

    private mutating func document() throws {
        while i < b.count {
            spaces()
            switch peek {
            case nil: return
            case 0x0A, 0x0D: try newline()
            case 0x23: comment()
            case 0x5B:
                i += 1
                let double = peek == 0x5B
                if double { i += 1 }
                spaces(); try key(); spaces()
                try expect(0x5D, "']' to close the table header")
                if double { try expect(0x5D, "']]' to close the table header") }
                try endOfLine()
            default:
                try keyValue()
                try endOfLine()
            }
        }
    }

    private mutating func endOfLine() throws {
        spaces()
        if peek == 0x23 { comment() }
        guard peek == nil || peek == 0x0A || peek == 0x0D else { throw fail("unexpected text after a value") }
    }

    private mutating func newline() throws {
        if peek == 0x0D { i += 1; guard peek == 0x0A else { throw fail("a carriage return without a line feed") } }
        i += 1; line += 1
    }

    private mutating func spaces() { while peek == 0x20 || peek == 0x09 { i += 1 } }

    private mutating func comment() { while let c = peek, c != 0x0A { i += 1 } }

    /// Whitespace, line ends and comments (between an array's values).
    private mutating func blanks() throws {
        while true {
            spaces()
            switch peek {
            case 0x0A, 0x0D: try newline()
            case 0x23: comment()
            default: return
            }
        }
    }

    private mutating func expect(_ c: UInt8, _ what: String) throws {
        guard peek == c else { throw fail("expected \(what)") }
        i += 1
    }

    private mutating func keyValue() throws {
        try key(); spaces()
        try expect(0x3D, "'=' after a key"); spaces()
        try value()
    }

    private mutating func key() throws {
        try simpleKey(); spaces()
        while peek == 0x2E { i += 1; spaces(); try simpleKey(); spaces() }
    }

    private mutating func simpleKey() throws {
        switch peek {
        case 0x22, 0x27: try string()
        default:
            let start = i
            while let c = peek, Self.isBare(c) { i += 1 }
            guard i > start else { throw fail("expected a key") }
        }
    }

    private static func isBare(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x5F || c == 0x2D
    }

    private mutating func value() throws {
        depth += 1
        defer { depth -= 1 }
        guard depth <= 32 else { throw fail("values nested deeper than 32") }
        switch peek {
        case 0x22, 0x27: try string()
        case 0x5B: try array()
        case 0x7B: try inlineTable()
        case 0x74: try word("true")
        case 0x66: try word("false")
        case let c? where c >= 0x30 && c <= 0x39: if try !dateOrTime() { try number() }
        case let c? where c == 0x2B || c == 0x2D: try number()
        default: throw fail("expected a value")
        }
    }

    private mutating func word(_ w: String) throws {
        for c in w.utf8 { try expect(c, "'\(w)'") }
    }

    private mutating func number() throws {
        if peek == 0x2B || peek == 0x2D { i += 1 }
        func digits() throws {
            let start = i
            while let c = peek, (c >= 0x30 && c <= 0x39) || c == 0x5F { i += 1 }
            guard i > start, b[start] != 0x5F, b[i - 1] != 0x5F else { throw fail("a malformed number") }
        }
        try digits()
        if peek == 0x2E { i += 1; try digits() }
        if peek == 0x65 || peek == 0x45 {
            i += 1
            if peek == 0x2B || peek == 0x2D { i += 1 }
            try digits()
        }
    }

    private func at(_ k: Int) -> UInt8? { i + k < b.count ? b[i + k] : nil }
    private static func isDigit(_ c: UInt8?) -> Bool { c.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }

    private mutating func digits(exactly n: Int) throws {
        for _ in 0..<n {
            guard Self.isDigit(peek) else { throw fail("a malformed date or time") }
            i += 1
        }
    }

    /// A date, a date and time (with an offset or without), or a time of day; false (nothing
    /// read) when the value is not one.
    private mutating func dateOrTime() throws -> Bool {
        if (0..<4).allSatisfy({ Self.isDigit(at($0)) }) && at(4) == 0x2D {
            try digits(exactly: 4); try expect(0x2D, "'-' in a date"); try digits(exactly: 2); try expect(0x2D, "'-' in a date"); try digits(exactly: 2)
            if let c = peek, c == 0x54 || c == 0x74 || (c == 0x20 && Self.isDigit(at(1))) {
                i += 1
                try timeOfDay()
                if peek == 0x5A || peek == 0x7A {
                    i += 1
                } else if peek == 0x2B || peek == 0x2D {
                    i += 1; try digits(exactly: 2); try expect(0x3A, "':' in a time offset"); try digits(exactly: 2)
                }
            }
            return true
        }
        if Self.isDigit(at(0)) && Self.isDigit(at(1)) && at(2) == 0x3A {
            try timeOfDay()
            return true
        }
        return false
    }

    private mutating func timeOfDay() throws {
        try digits(exactly: 2); try expect(0x3A, "':' in a time"); try digits(exactly: 2); try expect(0x3A, "':' in a time"); try digits(exactly: 2)
        if peek == 0x2E {
            i += 1
            guard Self.isDigit(peek) else { throw fail("a malformed time") }
            while Self.isDigit(peek) { i += 1 }
        }
    }

    private mutating func string() throws {
        let q = b[i]
        let triple = i + 2 < b.count && b[i + 1] == q && b[i + 2] == q
        i += triple ? 3 : 1
        while let c = peek {
            if c == q {
                if !triple { i += 1; return }
                if i + 2 < b.count && b[i + 1] == q && b[i + 2] == q { i += 3; return }
            }
            if c == 0x0A || c == 0x0D {
                guard triple else { throw fail("a string not closed on its line") }
                try newline(); continue
            }
            if c < 0x20 && c != 0x09 || c == 0x7F { throw fail("a control character in a string") }
            if q == 0x22 && c == 0x5C {  // an escape: one character, or u/U and hex digits
                i += 1
                guard let e = peek else { break }
                switch e {
                case 0x62, 0x74, 0x6E, 0x66, 0x72, 0x22, 0x5C: i += 1
                case 0x75, 0x55:
                    let n = e == 0x75 ? 4 : 8
                    i += 1
                    for _ in 0..<n {
                        guard let h = peek, (h >= 0x30 && h <= 0x39) || (h >= 0x41 && h <= 0x46) || (h >= 0x61 && h <= 0x66) else { throw fail("a malformed \\u escape") }
                        i += 1
                    }
                case 0x0A, 0x0D, 0x20, 0x09:  // a line-ending backslash (multi-line strings only)
                    guard triple else { throw fail("an unknown escape in a string") }
                    try blanks()
                default: throw fail("an unknown escape in a string")
                }
                continue
            }
            i += 1
        }
        throw fail("a string not closed")
    }

    private mutating func array() throws {
        i += 1  // [
        try blanks()
        if peek == 0x5D { i += 1; return }
        while true {
            try value()
            try blanks()
            switch peek {
            case 0x2C:
                i += 1
                try blanks()
                if peek == 0x5D { i += 1; return }  // a trailing comma
            case 0x5D: i += 1; return
            default: throw fail("expected ',' or ']' in an array")
            }
        }
    }

    private mutating func inlineTable() throws {
        i += 1  // {
        spaces()
        if peek == 0x7D { i += 1; return }
        while true {
            try keyValue()
            spaces()
            switch peek {
            case 0x2C: i += 1; spaces()
            case 0x7D: i += 1; return
            default: throw fail("expected ',' or '}' in an inline table")
            }
        }
    }
}
