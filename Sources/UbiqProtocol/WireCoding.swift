import Foundation
import UbiqCore

/// JSON as the server and its clients write it: ISO-8601 dates with milliseconds, sorted keys.
public enum WireCoding {
    public static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.dateEncodingStrategy = .custom { date, enc in
            var c = enc.singleValueContainer()
            try c.encode(KVDateFormat.format(date))
        }
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }

    public static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .custom { dec in
            let c = try dec.singleValueContainer()
            let s = try c.decode(String.self)
            guard let date = KVDateFormat.parse(s) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "not an ISO-8601 date: \(s.prefix(64))")
            }
            return date
        }
        return d
    }

    /// The value as JSON: written by hand for the messages that carry many records
    /// (`FastJSONCodable`), by Foundation otherwise.
    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        if let fast = value as? any FastJSONCodable, let bytes = fast.fastJSON() { return Data(bytes) }
        return try encoder().encode(value)
    }

    /// The value read from JSON: by hand for the messages that carry many records when they are
    /// in the form written here, by Foundation otherwise (and for every error).
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        if let fast = type as? any FastJSONCodable.Type, let value = fast.fastDecode(data) as? T { return value }
        return try decoder().decode(type, from: data)
    }
}
