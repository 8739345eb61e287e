import Foundation

/// A property-list value stored in the key-value store, typed explicitly on the wire:
/// `{"type": "string", "value": "…"}`; dates as ISO-8601 text, data as base64,
/// arrays and dictionaries holding typed values.
public indirect enum KVValue: Hashable, Sendable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case array([KVValue])
    case dictionary([String: KVValue])

    /// The type's name on the wire and in `--json`.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .int: "int"
        case .double: "double"
        case .bool: "bool"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }

    /// The bytes this value counts against the store's limits: UTF-8 length of strings and
    /// dictionary keys, the length of data, 8 for numbers and dates, 1 for booleans,
    /// summed through arrays and dictionaries.
    public var byteCount: Int {
        switch self {
        case .string(let s): s.utf8.count
        case .int, .double, .date: 8
        case .bool: 1
        case .data(let d): d.count
        case .array(let a): a.reduce(0) { $0 + $1.byteCount }
        case .dictionary(let d): d.reduce(0) { $0 + $1.key.utf8.count + $1.value.byteCount }
        }
    }

    /// Nesting depth (a scalar is 1).
    public var depth: Int {
        switch self {
        case .array(let a): 1 + (a.map(\.depth).max() ?? 0)
        case .dictionary(let d): 1 + (d.values.map(\.depth).max() ?? 0)
        default: 1
        }
    }

    /// Rejects values JSON and property lists cannot carry faithfully (NaN, infinities) and
    /// nesting deeper than ``KVLimits/maxDepth``.
    public func validate() throws {
        if depth > KVLimits.maxDepth { throw CoreError(.invalidValue, "value is nested deeper than \(KVLimits.maxDepth) levels") }
        try walk { v in
            if case .double(let d) = v, !d.isFinite { throw CoreError(.invalidValue, "a double must be finite") }
        }
    }

    func walk(_ body: (KVValue) throws -> Void) rethrows {
        try body(self)
        switch self {
        case .array(let a): for v in a { try v.walk(body) }
        case .dictionary(let d): for v in d.values { try v.walk(body) }
        default: break
        }
    }
}

extension KVValue: Codable {
    enum CodingKeys: String, CodingKey { case type, value }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let type = try c.decode(String.self, forKey: .type)
        switch type {
        case "string": self = .string(try c.decode(String.self, forKey: .value))
        case "int": self = .int(try c.decode(Int64.self, forKey: .value))
        case "double": self = .double(try c.decode(Double.self, forKey: .value))
        case "bool": self = .bool(try c.decode(Bool.self, forKey: .value))
        case "date":
            let s = try c.decode(String.self, forKey: .value)
            guard let d = KVDateFormat.parse(s) else {
                throw DecodingError.dataCorruptedError(forKey: .value, in: c, debugDescription: "not an ISO-8601 date: \(s.prefix(64))")
            }
            self = .date(d)
        case "data":
            let s = try c.decode(String.self, forKey: .value)
            guard let d = Data(base64Encoded: s) else {
                throw DecodingError.dataCorruptedError(forKey: .value, in: c, debugDescription: "not base64")
            }
            self = .data(d)
        case "array": self = .array(try c.decode([KVValue].self, forKey: .value))
        case "dictionary": self = .dictionary(try c.decode([String: KVValue].self, forKey: .value))
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: c, debugDescription: "unknown value type '\(type.prefix(32))'")
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(typeName, forKey: .type)
        switch self {
        case .string(let s): try c.encode(s, forKey: .value)
        case .int(let i): try c.encode(i, forKey: .value)
        case .double(let d): try c.encode(d, forKey: .value)
        case .bool(let b): try c.encode(b, forKey: .value)
        case .date(let d): try c.encode(KVDateFormat.format(d), forKey: .value)
        case .data(let d): try c.encode(d.base64EncodedString(), forKey: .value)
        case .array(let a): try c.encode(a, forKey: .value)
        case .dictionary(let d): try c.encode(d, forKey: .value)
        }
    }
}

/// ISO-8601 with milliseconds, in UTC (`2026-11-22T10:42:00.000Z`). Dates travel with millisecond
/// precision; the fraction is handled here because Foundation's style truncates it inexactly.
public enum KVDateFormat {
    public static func format(_ d: Date) -> String {
        if let s = CivilTime.format(d) { return s }
        return foundationFormat(d)
    }

    /// Foundation's formatter (years outside `CivilTime.years`).
    static func foundationFormat(_ d: Date) -> String {
        let ms = Int64((d.timeIntervalSince1970 * 1000).rounded())
        let (sec, frac) = ms.quotientAndRemainder(dividingBy: 1000)
        let whole = sec - (frac < 0 ? 1 : 0)
        let f = frac < 0 ? frac + 1000 : frac
        let base = Date(timeIntervalSince1970: Double(whole))
            .formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!))
        let digits = String(f)
        return String(base.dropLast()) + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    public static func parse(_ s: String) -> Date? {
        guard s.utf8.count <= 64 else { return nil }
        switch CivilTime.parse(s) {
        case .date(let d): return d
        case .invalid: return nil
        case .other: return foundationParse(s)
        }
    }

    /// Foundation's parser (time-zone offsets and other forms the fast path leaves to it).
    static func foundationParse(_ s: String) -> Date? {
        var text = s
        var fraction = 0.0
        if let dot = s.firstIndex(of: ".") {
            let digits = s[s.index(after: dot)...].prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, let v = Double("0." + digits) else { return nil }
            fraction = v
            text = String(s[..<dot]) + s[s.index(dot, offsetBy: digits.count + 1)...]
        }
        guard let d = try? Date.ISO8601FormatStyle().parse(text) else { return nil }
        return roundedToMillis(Date(timeIntervalSince1970: d.timeIntervalSince1970 + fraction))
    }

    /// Rounds to the nearest millisecond.
    public static func roundedToMillis(_ d: Date) -> Date {
        Date(timeIntervalSince1970: (d.timeIntervalSince1970 * 1000).rounded() / 1000)
    }
}

/// The key-value store's limits (product §4).
public enum KVLimits {
    /// At most this many keys in one store.
    public static let maxKeys = 1024
    /// A key is 1...64 bytes of UTF-8.
    public static let maxKeyBytes = 64
    /// One key plus its value, in bytes (1 MB = 1,048,576 bytes).
    public static let maxEntryBytes = 1 << 20
    /// The whole store, in bytes.
    public static let maxStoreBytes = 1 << 20
    /// Deepest nesting of arrays and dictionaries.
    public static let maxDepth = 32
    /// How far ahead of the server's clock a write's stamp may be: a day. Devices whose clocks
    /// disagree by hours still sync (product §4.3: the clock carries a causally later write past
    /// an earlier one's stamp), but no stamp can reach the end of the clock's range.
    public static let maxStampAheadMillis: Int64 = 24 * 3_600_000
    /// Deleted keys a store on the server remembers (each delete must win over older writes
    /// from devices that were offline). Past this the oldest are forgotten: the store's horizon
    /// moves to the newest forgotten stamp (an older write to a key the store does not hold
    /// loses), and a device that had not yet seen a forgotten delete reloads the whole store.
    /// Without a limit, deleted keys piled up uncounted (20,000 against a limit of 1,024 keys,
    /// every write then reading them all).
    public static let maxTombstones = 1024
    /// Writes of one key the server keeps for its history (`ubiq kv history`, `i` in Settings).
    public static let historyPerKey = 10
    /// Bytes of values a store's history keeps besides each key's newest write (the oldest
    /// writes go first).
    public static let maxHistoryBytes = 4 << 20

    /// Refuses a stamp further ahead of `nowMillis` (the server's clock) than
    /// `maxStampAheadMillis`: a stamp at the end of the clock's range would win over every
    /// later write on every device (their clocks cannot pass it).
    public static func check(stamp: HLCTimestamp, nowMillis: Int64) throws {
        let (limit, overflow) = nowMillis.addingReportingOverflow(maxStampAheadMillis)
        guard overflow || stamp.wallMillis <= limit else {
            throw CoreError(.kvClockAhead, "a write is stamped \(stamp.wallMillis / 1000 - nowMillis / 1000) s ahead of the server's clock; set the writing device's clock right")
        }
    }

    /// Checks one key (and optional value) on its own.
    public static func check(key: String, value: KVValue?) throws {
        let kb = key.utf8.count
        guard kb >= 1, kb <= maxKeyBytes else { throw CoreError(.kvKeyInvalid, "a key must be 1-\(maxKeyBytes) bytes of UTF-8 (got \(kb))") }
        guard !key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw CoreError(.kvKeyInvalid, "a key may not contain control characters")
        }
        if let value {
            try value.validate()
            let size = kb + value.byteCount
            if size > maxEntryBytes { throw CoreError(.kvValueTooLarge, "key '\(key)' and its value are \(size) bytes; the limit is \(maxEntryBytes)") }
        }
    }

    /// Checks a whole store after a change: the number of keys and the total bytes.
    public static func check(store: [String: KVValue]) throws {
        if store.count > maxKeys { throw CoreError(.kvTooManyKeys, "the store would hold \(store.count) keys; the limit is \(maxKeys)") }
        let total = totalBytes(store)
        if total > maxStoreBytes { throw CoreError(.kvStoreTooLarge, "the store would hold \(total) bytes; the limit is \(maxStoreBytes)") }
    }

    /// The bytes a store counts against its limit.
    public static func totalBytes(_ store: [String: KVValue]) -> Int {
        store.reduce(0) { $0 + $1.key.utf8.count + $1.value.byteCount }
    }
}

/// One key's state as kept by server and devices: the value (nil = removed, a tombstone),
/// its HLC stamp and the device that wrote it.
public struct KVEntry: Hashable, Sendable, Codable {
    public let key: String
    public let value: KVValue?
    public let stamp: HLCTimestamp
    public let device: DeviceID

    public init(key: String, value: KVValue?, stamp: HLCTimestamp, device: DeviceID) {
        self.key = key
        self.value = value
        self.stamp = stamp
        self.device = device
    }

    /// Last-writer-wins: the greater HLC stamp wins; equal stamps are ordered by device ID.
    public func wins(over other: KVEntry) -> Bool {
        if stamp != other.stamp { return stamp > other.stamp }
        return device > other.device
    }
}

/// Pure merge of a batch of incoming entries into a store's current entries.
public enum KVMerge {
    /// The entries of `incoming` that win over what `current` holds for their keys. A key
    /// `current` does not hold was never set or its delete was forgotten: a write stamped at or
    /// before `horizon` (the newest forgotten delete) loses, as it would have to that delete.
    public static func winners(_ incoming: [KVEntry], over current: [String: KVEntry], horizon: HLCTimestamp? = nil) -> [KVEntry] {
        var best: [String: KVEntry] = [:]
        for e in incoming {
            if let b = best[e.key], !e.wins(over: b) { continue }
            best[e.key] = e
        }
        return best.values.filter { e in current[e.key].map { e.wins(over: $0) } ?? horizon.map { e.stamp > $0 } ?? true }.sorted { $0.key < $1.key }
    }

    /// The deletes to forget so a store keeps at most `KVLimits.maxTombstones` (the oldest go
    /// first), and the store's new horizon: the newest stamp forgotten.
    public static func forgetting(_ tombstones: [KVEntry], keep limit: Int = KVLimits.maxTombstones) -> (keys: [String], horizon: HLCTimestamp?) {
        guard tombstones.count > limit else { return ([], nil) }
        let oldest = tombstones.sorted { $0.stamp < $1.stamp || ($0.stamp == $1.stamp && $0.key < $1.key) }.prefix(tombstones.count - limit)
        return (oldest.map(\.key), oldest.last?.stamp)
    }
}
