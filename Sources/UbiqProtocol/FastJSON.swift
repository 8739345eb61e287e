import Foundation
import UbiqCore

/// A message written and read by hand instead of through `JSONEncoder`/`JSONDecoder`: the
/// change feed, commit batches and manifests carry thousands of records, and Foundation's coders
/// spent 20–30 µs on each (a sixth of all the CPU when 10,000 small files travel).
///
/// The hand-written form is the same JSON (`WireCoding`: sorted keys, ISO-8601 dates with
/// milliseconds, nil fields left out). Reading is strict and falls back: anything the fast
/// reader does not expect (an older form, an escape it does not know, a number with a fraction, a
/// missing field) makes it give up, and `WireCoding` then decodes the message with Foundation,
/// which accepts or refuses it with its usual error. So the fast path never accepts what
/// Foundation would refuse, nor reads a different value.
public protocol FastJSONCodable: Codable {
    /// Writes the value; false if it has a part only Foundation writes (the caller then does).
    func writeJSON(_ out: inout JSONOut) -> Bool
    /// Reads a value; throws `JSONIn.GiveUp` for anything unexpected.
    static func readJSON(_ input: inout JSONIn) throws -> Self
}

/// JSON text being written by hand.
public struct JSONOut {
    public var bytes: [UInt8] = []
    var first = true

    public init(capacity: Int = 1024) { bytes.reserveCapacity(capacity) }

    /// `{`, the fields `body` writes, `}`.
    public mutating func object(_ body: (inout JSONOut) -> Bool) -> Bool {
        bytes.append(UInt8(ascii: "{"))
        first = true
        guard body(&self) else { return false }
        bytes.append(UInt8(ascii: "}"))
        first = false
        return true
    }

    /// `[`, each element, `]`.
    public mutating func array<S: Sequence>(_ items: S, _ each: (inout JSONOut, S.Element) -> Bool) -> Bool {
        bytes.append(UInt8(ascii: "["))
        var firstItem = true
        for item in items {
            if !firstItem { bytes.append(UInt8(ascii: ",")) }
            firstItem = false
            guard each(&self, item) else { return false }
        }
        bytes.append(UInt8(ascii: "]"))
        return true
    }

    /// A field's name (with the comma before it when it is not the first).
    public mutating func key(_ name: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    /// A string, escaped as JSON requires (slashes left as they are).
    public mutating func string(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { u in
            var start = 0
            for (i, c) in u.enumerated() where c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: u[start..<i]))
                start = i + 1
                bytes.append(UInt8(ascii: "\\"))
                switch c {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(c)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    let hex: StaticString = "0123456789abcdef"
                    bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex.utf8Start[Int(c >> 4)], hex.utf8Start[Int(c & 0xF)]])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: u[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func int<I: BinaryInteger>(_ v: I) { bytes.append(contentsOf: String(v).utf8) }
    public mutating func bool(_ v: Bool) { bytes.append(contentsOf: (v ? "true" : "false").utf8) }
    public mutating func date(_ d: Date) { string(KVDateFormat.format(d)) }
    public mutating func hash(_ h: ContentHash) {
        bytes.append(UInt8(ascii: "\""))
        h.appendHex(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }
}

/// JSON text being read by hand: a cursor over its bytes.
public struct JSONIn {
    /// The input is not in the form the fast reader expects; Foundation decides.
    public struct GiveUp: Error {}

    let bytes: UnsafeRawBufferPointer
    var i = 0
    /// Objects and arrays open around the cursor: deeper than `maxDepth` gives up, so a
    /// hostile body of nested brackets cannot exhaust the stack (Foundation refuses it).
    var depth = 0
    static let maxDepth = 32
    /// Most names one object may have before the reader gives up (to Foundation).
    static let maxMembers = 256
    /// Names of one object checked for repeats by a scan of a list; those after, in a set.
    static let listedMembers = 16

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func skipSpace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    mutating func take(_ c: UInt8) throws {
        skipSpace()
        guard i < bytes.count, bytes[i] == c else { throw GiveUp() }
        i += 1
    }

    /// True (and consumed) if the next value is `null`.
    public mutating func null() -> Bool {
        skipSpace()
        guard bytes.count - i >= 4, bytes[i] == UInt8(ascii: "n"), bytes[i + 1] == UInt8(ascii: "u"),
              bytes[i + 2] == UInt8(ascii: "l"), bytes[i + 3] == UInt8(ascii: "l") else { return false }
        i += 4
        return true
    }

    /// Reads an object, calling `field` with each name; `field` reads (or `skip`s) the value.
    /// A name that comes twice gives up (which one counts is Foundation's to say).
    /// The first `listedMembers` names are remembered in a list (most objects have fewer: a set
    /// built, grown and hashed for every object was 2 % of the CPU of a 200,000-file first
    /// sync), the rest in a set (a list alone was a linear scan a member: an object of 40,000
    /// names cost 46 s of CPU); past `maxMembers` names it gives up (no message has that many).
    public mutating func object(_ field: (inout JSONIn, String) throws -> Void) throws {
        var listed: [String] = []
        var seen = Set<String>()
        try members(open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { r in
            let name = try r.string()
            guard listed.count + seen.count < Self.maxMembers, !listed.contains(name) else { throw GiveUp() }
            if listed.count < Self.listedMembers {
                listed.append(name)
            } else {
                guard seen.insert(name).inserted else { throw GiveUp() }
            }
            try r.take(UInt8(ascii: ":"))
            try field(&r, name)
        }
    }

    /// Reads an array, calling `element` for each.
    public mutating func array(_ element: (inout JSONIn) throws -> Void) throws {
        try members(open: UInt8(ascii: "["), close: UInt8(ascii: "]"), element)
    }

    /// `open`, the members `each` reads separated by commas, `close`; one level deeper while
    /// inside (past `maxDepth` it gives up).
    private mutating func members(open: UInt8, close: UInt8, _ each: (inout JSONIn) throws -> Void) throws {
        try take(open)
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else { throw GiveUp() }
        skipSpace()
        if i < bytes.count, bytes[i] == close { i += 1; return }
        while true {
            try each(&self)
            skipSpace()
            guard i < bytes.count else { throw GiveUp() }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == close { i += 1; return }
            throw GiveUp()
        }
    }

    /// The elements of an array, each read by `element`.
    public mutating func list<T>(_ element: (inout JSONIn) throws -> T) throws -> [T] {
        var out: [T] = []
        try array { out.append(try element(&$0)) }
        return out
    }

    /// A string; escapes other than `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t` and `\u` of a
    /// character outside the surrogate range, raw control characters and invalid UTF-8 give up.
    public mutating func string() throws -> String {
        try take(UInt8(ascii: "\""))
        let start = i
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                defer { i += 1 }
                guard let s = String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self) else { throw GiveUp() }
                return s
            }
            if c == UInt8(ascii: "\\") { i = start; return try escapedString() }
            guard c >= 0x20 else { throw GiveUp() }
            i += 1
        }
        throw GiveUp()
    }

    private mutating func escapedString() throws -> String {
        var out: [UInt8] = []
        while i < bytes.count {
            let c = bytes[i]
            i += 1
            switch c {
            case UInt8(ascii: "\""):
                guard let s = String(validating: out, as: UTF8.self) else { throw GiveUp() }
                return s
            case UInt8(ascii: "\\"):
                guard i < bytes.count else { throw GiveUp() }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard bytes.count - i >= 4 else { throw GiveUp() }
                    var v: UInt32 = 0
                    for k in 0..<4 {
                        let h = bytes[i + k]
                        let d: UInt8
                        switch h {
                        case 0x30...0x39: d = h - 0x30
                        case 0x61...0x66: d = h - 0x61 + 10
                        case 0x41...0x46: d = h - 0x41 + 10
                        default: throw GiveUp()
                        }
                        v = v << 4 | UInt32(d)
                    }
                    i += 4
                    guard let scalar = Unicode.Scalar(v) else { throw GiveUp() }  // surrogates: left to Foundation
                    out.append(contentsOf: String(Character(scalar)).utf8)
                default: throw GiveUp()
                }
            default:
                guard c >= 0x20 else { throw GiveUp() }
                out.append(c)
            }
        }
        throw GiveUp()
    }

    /// An integer written as plain decimal digits (an optional minus sign, no fraction or exponent).
    public mutating func int64() throws -> Int64 {
        skipSpace()
        var negative = false
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { negative = true; i += 1 }
        var v: Int64 = 0, digits = 0
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(Int64(bytes[i] - 0x30))
            guard !o1, !o2 else { throw GiveUp() }
            v = a
            digits += 1
            i += 1
        }
        guard digits > 0, digits == 1 || bytes[i - digits] != 0x30 else { throw GiveUp() }  // no leading zeros
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") || bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") { throw GiveUp() }
        return negative ? -v : v
    }

    public mutating func int() throws -> Int { Int(try int64()) }

    public mutating func bool() throws -> Bool {
        skipSpace()
        if bytes.count - i >= 4, bytes[i] == UInt8(ascii: "t"), bytes[i + 1] == UInt8(ascii: "r"), bytes[i + 2] == UInt8(ascii: "u"), bytes[i + 3] == UInt8(ascii: "e") {
            i += 4
            return true
        }
        if bytes.count - i >= 5, bytes[i] == UInt8(ascii: "f"), bytes[i + 1] == UInt8(ascii: "a"), bytes[i + 2] == UInt8(ascii: "l"),
           bytes[i + 3] == UInt8(ascii: "s"), bytes[i + 4] == UInt8(ascii: "e") {
            i += 5
            return false
        }
        throw GiveUp()
    }

    public mutating func date() throws -> Date {
        guard let d = KVDateFormat.parse(try string()) else { throw GiveUp() }
        return d
    }

    /// A hash: exactly 64 hex characters between quotes, read where they lie.
    public mutating func hash() throws -> ContentHash {
        try take(UInt8(ascii: "\""))
        guard bytes.count - i >= 65, bytes[i + 64] == UInt8(ascii: "\""),
              let h = ContentHash(hexBytes: UnsafeRawBufferPointer(rebasing: bytes[i..<i + 64])) else { throw GiveUp() }
        i += 65
        return h
    }

    public mutating func id<T: UUIDIdentifier>(_: T.Type) throws -> T {
        guard let v = T(string: try string()) else { throw GiveUp() }
        return v
    }

    public mutating func path() throws -> RelativePath {
        guard let p = try? RelativePath(validating: try string()) else { throw GiveUp() }
        return p
    }

    public mutating func raw<T: RawRepresentable>(_: T.Type) throws -> T where T.RawValue == String {
        guard let v = T(rawValue: try string()) else { throw GiveUp() }
        return v
    }

    /// Skips a value of a field the reader does not know (Foundation ignores those too).
    public mutating func skip() throws {
        skipSpace()
        guard i < bytes.count else { throw GiveUp() }
        switch bytes[i] {
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "{"): try object { r, _ in try r.skip() }
        case UInt8(ascii: "["): try array { try $0.skip() }
        case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try bool()
        case UInt8(ascii: "n"): guard null() else { throw GiveUp() }
        default: _ = try int64()  // numbers with fractions give up: Foundation decides
        }
    }

    /// Nothing but white space is left.
    mutating func end() throws {
        skipSpace()
        guard i == bytes.count else { throw GiveUp() }
    }
}

extension FastJSONCodable {
    /// The value written by hand, or nil if a part of it is Foundation's to write.
    public func fastJSON() -> [UInt8]? {
        var out = JSONOut()
        return writeJSON(&out) ? out.bytes : nil
    }

    /// The value read by hand from `data`; nil if the fast reader gives up.
    public static func fastDecode(_ data: Data) -> Self? {
        data.withUnsafeBytes { raw in
            var input = JSONIn(raw)
            guard let v = try? readJSON(&input), (try? input.end()) != nil else { return nil }
            return v
        }
    }
}
