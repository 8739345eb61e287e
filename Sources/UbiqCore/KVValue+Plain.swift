import Foundation

/// Plain JSON for values as people and scripts see them (`ubiq kv get --json`): strings,
/// numbers, booleans, arrays and objects as themselves; dates as ISO-8601 text; data as base64.
public struct PlainKVValue: Encodable, Sendable {
    public let value: KVValue
    public init(_ value: KVValue) { self.value = value }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch value {
        case .string(let s): try c.encode(s)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .bool(let b): try c.encode(b)
        case .date(let d): try c.encode(KVDateFormat.format(d))
        case .data(let d): try c.encode(d.base64EncodedString())
        case .array(let a): try c.encode(a.map(PlainKVValue.init))
        case .dictionary(let d): try c.encode(d.mapValues(PlainKVValue.init))
        }
    }
}

/// Any JSON document except `null`, read strictly (`true` is a bool, `1` an int, `1.5` a double).
enum PlainJSON: Decodable {
    case value(KVValue)

    init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let b = try? c.decode(Bool.self) { self = .value(.bool(b)); return }
        if let i = try? c.decode(Int64.self) { self = .value(.int(i)); return }
        if let d = try? c.decode(Double.self) { self = .value(.double(d)); return }
        if let s = try? c.decode(String.self) { self = .value(.string(s)); return }
        if let a = try? c.decode([PlainJSON].self) { self = .value(.array(a.map(\.kv))); return }
        if let o = try? c.decode([String: PlainJSON].self) { self = .value(.dictionary(o.mapValues(\.kv))); return }
        throw DecodingError.dataCorruptedError(in: c, debugDescription: "null is not a value the store can hold")
    }

    var kv: KVValue { switch self { case .value(let v): v } }
}

extension KVValue {
    /// The command line's value types (`kv set --type`).
    public static let typeNames = ["string", "int", "double", "bool", "date", "data", "json"]

    /// Parses a value as typed on the command line; errors say what was expected.
    public static func parse(_ text: String, type: String) throws -> KVValue {
        func bad(_ what: String) -> CoreError { CoreError(.invalidValue, "'\(text.prefix(40))' is not \(what)") }
        switch type {
        case "string": return .string(text)
        case "int":
            guard let i = Int64(text.trimmingCharacters(in: .whitespaces)) else { throw bad("an integer") }
            return .int(i)
        case "double":
            guard let d = Double(text.trimmingCharacters(in: .whitespaces)), d.isFinite else { throw bad("a finite number") }
            return .double(d)
        case "bool":
            switch text.lowercased() {
            case "true", "yes", "1", "on": return .bool(true)
            case "false", "no", "0", "off": return .bool(false)
            default: throw bad("true or false")
            }
        case "date":
            guard let d = KVDateFormat.parse(text) else { throw bad("an ISO-8601 date such as 2026-11-22T10:00:00Z") }
            return .date(d)
        case "data":
            guard let d = Data(base64Encoded: text) else { throw bad("base64 data") }
            return .data(d)
        case "json":
            do {
                let v = try JSONDecoder().decode(PlainJSON.self, from: Data(text.utf8)).kv
                try v.validate()
                return v
            } catch let e as CoreError {
                throw e
            } catch {
                throw bad("JSON (an array, object, string, number or boolean)")
            }
        default:
            throw CoreError(.invalidValue, "unknown type '\(type)' (\(typeNames.joined(separator: ", ")))")
        }
    }

    /// A one-line human form: strings as they are, the rest as plain JSON.
    public var displayText: String {
        switch self {
        case .string(let s): return s
        case .date(let d): return KVDateFormat.format(d)
        case .data(let d): return d.base64EncodedString()
        default: break
        }
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? e.encode(PlainKVValue(self))).map { String(decoding: $0, as: UTF8.self) } ?? "?"
    }
}
