import Foundation
import TOMLKit
import UbiqCore

/// The whole settings store as one TOML document (`E` in Settings): written for `$EDITOR`,
/// read back, and turned into the writes that make the store say what the document says.
/// Pure. Only what the user changed is written: each key is compared with what the document
/// said *before* the edit (read back the same way), so a value TOML would round differently
/// (a date's sub-millisecond part) is never rewritten by accident, and keys changed on another
/// device meanwhile are left alone unless the user edited them too.
public enum SettingsDocument {
    /// What a document failed on, with the line (1-based) when known.
    public struct Problem: Error, Equatable, CustomStringConvertible {
        public var line: Int?
        public var message: String
        public var description: String { line.map { "line \($0): \(message)" } ?? message }
    }

    /// The document: a header, then `"key" = value` per key in key order. Values TOML cannot
    /// carry (`data`) are named in comments and left as they are.
    public static func text(_ entries: [KVEntry]) -> String {
        var out = """
        # Ubiquity settings: every key of the synced store. Edit, save and quit: changed and new
        # keys are saved on every device in one write; a key whose line is deleted is deleted.
        # Types follow TOML: "text", 12, 1.5, true, 2026-11-27T10:42:00Z, [lists], { tables }.

        """
        for e in entries.sorted(by: { $0.key < $1.key }) {
            guard let v = e.value else { continue }
            if let t = toml(v) {
                out += "\(quoted(e.key)) = \(t)\n"
            } else {
                out += "# \(quoted(e.key)): \(v.typeName) (\(v.byteCount) bytes) is left as it is here (ubiq kv set --type data)\n"
            }
        }
        return out
    }

    /// The keys the document holds, with their values.
    public static func parse(_ text: String) throws -> [String: KVValue] {
        // The TOML library aborts the process on some damaged input: a strict check first.
        if let f = TOMLPreflight.check(text) { throw Problem(line: f.line, message: f.message) }
        let table: TOMLTable
        do { table = try TOMLTable(string: text) } catch let e as TOMLParseError {
            throw Problem(line: e.source.begin.line, message: e.description)
        }
        var out: [String: KVValue] = [:]
        for key in table.keys {
            let v = try value(table[key]!, at: key)
            try KVLimits.check(key: key, value: v)
            out[key] = v
        }
        return out
    }

    /// The writes that take the store from `before` (the document as written) to `after` (as
    /// saved): new and changed keys with their values, removed keys as nil.
    public static func changes(before: [String: KVValue], after: [String: KVValue]) -> [String: KVValue?] {
        var out: [String: KVValue?] = [:]
        for (k, v) in after where before[k] != v { out[k] = .some(v) }
        for k in before.keys where after[k] == nil { out[k] = .some(nil) }
        return out
    }

    // MARK: writing

    static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where u.value < 0x20 || u.value == 0x7F: out += String(format: "\\u%04X", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    /// A value as TOML text; nil for what TOML cannot carry.
    static func toml(_ v: KVValue) -> String? {
        switch v {
        case .string(let s): return quoted(s)
        case .int(let i): return String(i)
        case .double(let d):
            let t = "\(d)"
            return t.contains(".") || t.contains("e") ? t : t + ".0"
        case .bool(let b): return b ? "true" : "false"
        case .date(let d):
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return f.string(from: d)
        case .data: return nil
        case .array(let a):
            var parts: [String] = []
            for x in a { guard let t = toml(x) else { return nil }; parts.append(t) }
            return "[" + parts.joined(separator: ", ") + "]"
        case .dictionary(let d):
            var parts: [String] = []
            for (k, x) in d.sorted(by: { $0.key < $1.key }) { guard let t = toml(x) else { return nil }; parts.append("\(quoted(k)) = \(t)") }
            return parts.isEmpty ? "{}" : "{ " + parts.joined(separator: ", ") + " }"
        }
    }

    // MARK: reading

    static func value(_ t: TOMLValueConvertible, at key: String) throws -> KVValue {
        if let b = t.bool { return .bool(b) }
        if let i = t.int { return .int(Int64(i)) }
        if let d = t.double {
            guard d.isFinite else { throw Problem(line: nil, message: "\(key): a number must be finite") }
            return .double(d)
        }
        if let s = t.string { return .string(s) }
        if let dt = t.dateTime {
            guard let offset = dt.offset else { throw Problem(line: nil, message: "\(key): a date needs its time zone (Z or +01:00)") }
            var c = DateComponents()
            c.year = dt.date.year; c.month = dt.date.month; c.day = dt.date.day
            c.hour = dt.time.hour; c.minute = dt.time.minute; c.second = dt.time.second; c.nanosecond = dt.time.nanoSecond
            var cal = Calendar(identifier: .gregorian)
            cal.timeZone = TimeZone(identifier: "UTC")!
            guard let utc = cal.date(from: c) else { throw Problem(line: nil, message: "\(key): not a date") }
            // Milliseconds, as the store keeps them.
            let ms = (utc.timeIntervalSince1970 - Double(offset.offset) * 60) * 1000
            return .date(Date(timeIntervalSince1970: ms.rounded() / 1000))
        }
        if t.date != nil || t.time != nil { throw Problem(line: nil, message: "\(key): a date needs a time and a time zone (2026-11-27T10:42:00Z)") }
        if let a = t.array { return .array(try a.map { try value($0, at: key) }) }
        if let tab = t.table {
            var d: [String: KVValue] = [:]
            for k in tab.keys { d[k] = try value(tab[k]!, at: key + "." + k) }
            return .dictionary(d)
        }
        throw Problem(line: nil, message: "\(key): a value of a kind the store does not keep")
    }
}
