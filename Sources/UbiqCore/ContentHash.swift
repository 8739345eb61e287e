import Crypto
import Foundation

/// A SHA-256 digest in lower-case hex: the name of a chunk and the identity of a file's content.
public struct ContentHash: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// 64 lower-case hex characters.
    public let hex: String

    /// Accepts exactly 64 hex characters (either case); throws `invalid_hash` otherwise.
    public init(validating s: String) throws {
        guard s.utf8.count == 64, s.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46) }) else {
            throw CoreError(.invalidHash, "not a SHA-256 hex digest: '\(s.prefix(80))'")
        }
        hex = s.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x46 }) ? s.lowercased() : s
    }

    init(digest: SHA256.Digest) {
        var out = [UInt8](); out.reserveCapacity(64)
        let digits = Array("0123456789abcdef".utf8)
        for b in digest { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 0xF)]) }
        hex = String(decoding: out, as: UTF8.self)
    }

    /// The hash of `bytes`.
    public static func of<D: DataProtocol>(_ bytes: D) -> ContentHash {
        ContentHash(digest: SHA256.hash(data: bytes))
    }
    /// The hash of a raw buffer.
    public static func of(buffer: UnsafeRawBufferPointer) -> ContentHash {
        ContentHash(digest: SHA256.hash(data: buffer))
    }
    /// The hash of the empty input.
    public static let empty = ContentHash.of([UInt8]())

    /// Fan-out prefix used by chunk folders (`ab/cd/`).
    public var fanOut: (String, String) {
        let u = Array(hex.utf8)
        return (String(decoding: u[0..<2], as: UTF8.self), String(decoding: u[2..<4], as: UTF8.self))
    }

    public var description: String { hex }
    public static func < (a: Self, b: Self) -> Bool { a.hex < b.hex }
    public init(from decoder: Decoder) throws {
        try self.init(validating: try decoder.singleValueContainer().decode(String.self))
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(hex)
    }
}

/// Incremental SHA-256 over a stream of pieces (a whole file's hash while it is being chunked).
public struct StreamingHash: Sendable {
    private var hasher = SHA256()
    public init() {}
    public mutating func update(_ buffer: UnsafeRawBufferPointer) { hasher.update(bufferPointer: buffer) }
    public mutating func update<D: DataProtocol>(_ bytes: D) { hasher.update(data: bytes) }
    public func finalize() -> ContentHash { ContentHash(digest: hasher.finalize()) }
}
