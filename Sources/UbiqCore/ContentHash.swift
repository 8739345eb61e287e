import Crypto
import Foundation

/// A SHA-256 digest: the name of a chunk and the identity of a file's content. Written as 64
/// lower-case hex characters; held as its 32 bytes, so copying one costs no reference counting
/// and comparing or hashing one touches four words instead of a 64-byte string.
public struct ContentHash: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The digest as four big-endian words: compared in order they sort like the hex text.
    private let w0, w1, w2, w3: UInt64

    /// 64 lower-case hex characters.
    public var hex: String {
        String(unsafeUninitializedCapacity: 64) { out in
            writeHex(to: UnsafeMutableRawBufferPointer(out))
            return 64
        }
    }

    /// Calls `body` with the 64 hex characters (nothing allocated).
    public func withHex<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var text: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        return try withUnsafeMutableBytes(of: &text) { raw in
            writeHex(to: raw)
            return try body(UnsafeRawBufferPointer(raw))
        }
    }

    /// Appends the 64 hex characters to `out`.
    public func appendHex(to out: inout [UInt8]) { withHex { out.append(contentsOf: $0) } }

    private func writeHex(to out: UnsafeMutableRawBufferPointer) {
        func put(_ w: UInt64, at start: Int) {
            let digits: StaticString = "0123456789abcdef"
            for i in 0..<16 { out[start + i] = digits.utf8Start[Int((w >> UInt64(60 - 4 * i)) & 0xF)] }
        }
        put(w0, at: 0); put(w1, at: 16); put(w2, at: 32); put(w3, at: 48)
    }

    /// Accepts exactly 64 hex characters (either case); throws `invalid_hash` otherwise.
    public init(validating s: String) throws {
        var str = s
        guard let h = str.withUTF8({ ContentHash(hexBytes: UnsafeRawBufferPointer($0)) }) else {
            throw CoreError(.invalidHash, "not a SHA-256 hex digest: '\(s.prefix(80))'")
        }
        self = h
    }

    /// Parses exactly 64 hex characters (either case); nil for anything else.
    public init?(hexBytes u: UnsafeRawBufferPointer) {
        guard u.count == 64 else { return nil }
        var bad: UInt8 = 0
        func word(_ k: Int) -> UInt64 {
            var w: UInt64 = 0
            for i in 16 * k..<16 * k + 16 {
                let v = HexDigit.value(u[i])
                bad |= v
                w = w << 4 | UInt64(v & 0xF)
            }
            return w
        }
        let (a, b, c, d) = (word(0), word(1), word(2), word(3))
        guard bad & HexDigit.invalid == 0 else { return nil }
        (w0, w1, w2, w3) = (a, b, c, d)
    }

    /// Parses `bytes` as exactly 64 hex characters; nil for anything else.
    public init?<C: Collection>(hexIn bytes: C) where C.Element == UInt8 {
        guard let h = bytes.withContiguousStorageIfAvailable({ ContentHash(hexBytes: UnsafeRawBufferPointer($0)) }) ?? Array(bytes).withUnsafeBytes({ ContentHash(hexBytes: $0) })
        else { return nil }
        self = h
    }

    init(digest: SHA256.Digest) {
        (w0, w1, w2, w3) = digest.withUnsafeBytes { raw in
            (UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
             UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
             UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
             UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
        }
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
        let text = hex
        return (String(text.prefix(2)), String(text.dropFirst(2).prefix(2)))
    }

    public var description: String { hex }
    public static func < (a: Self, b: Self) -> Bool { (a.w0, a.w1, a.w2, a.w3) < (b.w0, b.w1, b.w2, b.w3) }
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

/// Hex digits without branches (parsing 20,000 hashes and IDs is part of every start-up).
enum HexDigit {
    /// Set in `value` for a byte that is not a hex digit.
    static let invalid: UInt8 = 0x10

    /// The digit's value (0–15), with `invalid` set when `c` is not `0-9`, `a-f` or `A-F`.
    @inline(__always) static func value(_ c: UInt8) -> UInt8 {
        let d = c &- 0x30, l = (c | 0x20) &- 0x61
        let isDigit = d < 10, isLetter = l < 6
        return isDigit ? d : (isLetter ? l &+ 10 : invalid)
    }
}
