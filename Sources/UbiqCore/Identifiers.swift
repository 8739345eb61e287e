import Foundation

/// A UUID-backed identifier; concrete IDs differ only by their tag so they cannot be mixed up.
public protocol UUIDIdentifier: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    var uuid: UUID { get }
    init(uuid: UUID)
}

extension UUIDIdentifier {
    /// Parses the canonical text form; nil when it is not a UUID.
    public init?(string: String) {
        guard let u = Self.parseUUID(string) ?? UUID(uuidString: string) else { return nil }
        self.init(uuid: u)
    }

    /// The canonical `8-4-4-4-12` hex form (either case) without Foundation's parser; nil for
    /// anything else (the caller then asks Foundation, which knows no other form either).
    static func parseUUID(_ s: String) -> UUID? {
        var s = s
        return s.withUTF8 { parseUUID(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Parses UTF-8 text in the canonical `8-4-4-4-12` hex form (either case) straight from
    /// memory (a database row's text, say); nil for anything else.
    public init?(canonicalUTF8 bytes: UnsafeRawBufferPointer) {
        guard let u = Self.parseUUID(bytes: bytes) else { return nil }
        self.init(uuid: u)
    }

    static func parseUUID(bytes u: UnsafeRawBufferPointer) -> UUID? {
        guard u.count == 36, u[8] == 0x2D, u[13] == 0x2D, u[18] == 0x2D, u[23] == 0x2D else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var bad: UInt8 = 0
        withUnsafeMutableBytes(of: &bytes) { out in
            var i = 0
            for n in 0..<16 {
                if i == 8 || i == 13 || i == 18 || i == 23 { i += 1 }  // the dashes
                let hi = HexDigit.value(u[i]), lo = HexDigit.value(u[i + 1])
                bad |= hi | lo
                out[n] = (hi & 0xF) << 4 | (lo & 0xF)
                i += 2
            }
        }
        return bad & HexDigit.invalid == 0 ? UUID(uuid: bytes) : nil
    }

    /// Lower-case canonical text form (`8-4-4-4-12` hex digits).
    public var description: String {
        withUnsafeBytes(of: uuid.uuid) { raw in
            String(unsafeUninitializedCapacity: 36) { out in
                let digits: StaticString = "0123456789abcdef"
                var i = 0
                for (n, b) in raw.enumerated() {
                    if n == 4 || n == 6 || n == 8 || n == 10 { out[i] = 0x2D; i += 1 }
                    out[i] = digits.utf8Start[Int(b >> 4)]
                    out[i + 1] = digits.utf8Start[Int(b & 0x0F)]
                    i += 2
                }
                return i
            }
        }
    }
    /// The order of the text form (byte order of the UUID), without building the text.
    public static func < (a: Self, b: Self) -> Bool {
        withUnsafeBytes(of: a.uuid.uuid) { x in
            withUnsafeBytes(of: b.uuid.uuid) { y in memcmp(x.baseAddress!, y.baseAddress!, 16) < 0 }
        }
    }
    public init(from decoder: Decoder) throws {
        let s = try decoder.singleValueContainer().decode(String.self)
        // Foundation parses with `sscanf`: ~1 % of all CPU when 10,000 files travel.
        guard let u = Self.parseUUID(s) ?? UUID(uuidString: s) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a UUID: \(s.prefix(64))"))
        }
        self.init(uuid: u)
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// An item's stable identity across renames and moves.
public struct ItemID: UUIDIdentifier { public let uuid: UUID; public init(uuid: UUID) { self.uuid = uuid } }
/// One committed content state of an item.
public struct VersionID: UUIDIdentifier { public let uuid: UUID; public init(uuid: UUID) { self.uuid = uuid } }
/// One installation of the client.
public struct DeviceID: UUIDIdentifier { public let uuid: UUID; public init(uuid: UUID) { self.uuid = uuid } }

/// A container's name, e.g. `TEAM.com.example.notes`: 1–255 bytes of `A–Z a–z 0–9 . _ -`,
/// not starting with a dot.
public struct ContainerID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public let string: String
    public init(validating s: String) throws {
        guard !s.isEmpty, s.utf8.count <= 255, !s.hasPrefix("."),
              s.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D })
        else { throw CoreError(.invalidContainer, "container ID must be 1-255 characters of A-Z a-z 0-9 . _ - not starting with '.'") }
        string = s
    }
    public var description: String { string }
    public static func < (a: Self, b: Self) -> Bool { a.string < b.string }
    public init(from decoder: Decoder) throws {
        try self.init(validating: try decoder.singleValueContainer().decode(String.self))
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(string)
    }
}
