import Crypto
import Foundation

/// Seals the settings (key-value store) of one container of an end-to-end encrypted account.
/// A key becomes a token (HMAC-SHA256 of the key, 16 bytes in base64url: equal keys, equal
/// tokens, so last-writer-wins still works on the server); a value becomes `.data` holding the
/// key and the value, AES-256-GCM-sealed with the token, the write's stamp and device as
/// associated data (the server cannot move a value to another key or restamp it). Stamps stay
/// in the clear: the server orders writes by them. A delete stays a delete of the token.
///
/// Tokens are made with the ring's first (identity) key, so every device agrees on them; values
/// are sealed with its newest key — past the first generation as `[epoch, sealed]` so a device
/// opens each with the key it was sealed with.
public struct SettingsCipher: Sendable {
    let ring: ContainerKeyring
    var key: SymmetricKey { ring.identity.settings }

    /// Seals with `keys`, opens what they sealed.
    public init(keys: ContainerKeys) { ring = ContainerKeyring(keys) }

    /// Tokens with the ring's first keys, values with its newest.
    public init(ring: ContainerKeyring) { self.ring = ring }

    /// What an entry costs on the server beyond its plain key and value (an encrypted store
    /// holds a little less than a plain one).
    public static let overheadPerEntry = 22 + 12 + 16 + 2 + 10

    /// The key's token.
    public func token(_ k: String) -> String {
        Base64URL.encode(Array(HMAC<SHA256>.authenticationCode(for: Array("key\n\(k)".utf8), using: key).prefix(16)))
    }

    func associated(_ token: String, _ e: KVEntry) -> [UInt8] {
        Array("ubiq-kv-e2e-v1\n\(token)\n\(e.stamp.wallMillis).\(e.stamp.counter)\n\(e.device)".utf8)
    }

    /// The entry as the server keeps it.
    public func seal(_ e: KVEntry) -> KVEntry {
        let t = token(e.key)
        guard let value = e.value else { return KVEntry(key: t, value: nil, stamp: e.stamp, device: e.device) }
        var plain: [UInt8] = []
        KVValueCoding.append(.string(e.key), to: &plain)
        KVValueCoding.append(value, to: &plain)
        let keys = ring.current
        let box = try! AES.GCM.seal(plain, using: keys.settings, authenticating: associated(t, e))
        let sealed: KVValue = keys.epoch == 1 ? .data(box.combined!) : .array([.int(Int64(keys.epoch)), .data(box.combined!)])
        return KVEntry(key: t, value: sealed, stamp: e.stamp, device: e.device)
    }

    /// The generation of the key a sealed value says it was sealed with; nil for a value that is
    /// not a sealed one. The server compares it with the account's newest.
    public static func epoch(of value: KVValue) -> Int? { split(value)?.0 }

    /// The epoch and sealed bytes of a sealed value; nil for anything else.
    static func split(_ value: KVValue) -> (Int, Data)? {
        if case .data(let d) = value { return (1, d) }
        guard case .array(let a) = value, a.count == 2, case .int(let e) = a[0], e >= 2, e <= 1_000_000, case .data(let d) = a[1] else { return nil }
        return (Int(e), d)
    }

    /// The entry the server's `sealed` stands for; `tampered` when it does not open, or opens
    /// to another key than its token's. A delete comes back with its token as its key (the
    /// replica matches it to the key it knows by `token(_:)`).
    public func open(_ sealed: KVEntry) throws -> KVEntry {
        guard let value = sealed.value else { return sealed }
        guard let (epoch, d) = Self.split(value) else { throw CoreError(.tampered, "a setting from the server is not a sealed one") }
        let key = try ring.keys(epoch: epoch).settings
        guard let box = try? AES.GCM.SealedBox(combined: d),
              let plain = try? AES.GCM.open(box, using: key, authenticating: associated(sealed.key, sealed)) else {
            throw CoreError(.tampered, "a setting from the server did not open with this account's key")
        }
        var at = 0
        let bytes = Array(plain)
        guard case .string(let k)? = try? KVValueCoding.read(bytes, at: &at, depth: 0), token(k) == sealed.key,
              let v = try? KVValueCoding.read(bytes, at: &at, depth: 0), at == bytes.count else {
            throw CoreError(.tampered, "a setting from the server is not what its key says")
        }
        return KVEntry(key: k, value: v, stamp: sealed.stamp, device: sealed.device)
    }
}

/// A compact binary form of `KVValue` (a tag byte, then the value; lengths and counts as
/// LEB128): what a sealed setting holds. Reading it is hostile-safe: bounded by the input and by
/// `KVLimits.maxDepth`.
enum KVValueCoding {
    static func appendLength(_ n: Int, to out: inout [UInt8]) {
        var n = UInt64(n)
        repeat {
            out.append(UInt8(n & 0x7F) | (n >= 0x80 ? 0x80 : 0))
            n >>= 7
        } while n > 0
    }

    static func append(_ v: KVValue, to out: inout [UInt8]) {
        switch v {
        case .string(let s): out.append(1); appendLength(s.utf8.count, to: &out); out += Array(s.utf8)
        case .int(let i): out.append(2); withUnsafeBytes(of: i.littleEndian) { out += $0 }
        case .double(let d): out.append(3); withUnsafeBytes(of: d.bitPattern.littleEndian) { out += $0 }
        case .bool(let b): out.append(b ? 5 : 4)
        case .date(let d): out.append(6); withUnsafeBytes(of: d.timeIntervalSince1970.bitPattern.littleEndian) { out += $0 }
        case .data(let d): out.append(7); appendLength(d.count, to: &out); out += Array(d)
        case .array(let a): out.append(8); appendLength(a.count, to: &out); for x in a { append(x, to: &out) }
        case .dictionary(let d):
            out.append(9); appendLength(d.count, to: &out)
            for k in d.keys.sorted() { appendLength(k.utf8.count, to: &out); out += Array(k.utf8); append(d[k]!, to: &out) }
        }
    }

    struct Bad: Error {}

    static func length(_ b: [UInt8], at i: inout Int) throws -> Int {
        var n: UInt64 = 0, shift: UInt64 = 0
        while true {
            guard i < b.count, shift < 35 else { throw Bad() }
            let byte = b[i]; i += 1
            n |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        guard n <= UInt64(b.count - i) else { throw Bad() }  // nothing claims more than is left
        return Int(n)
    }

    static func fixed(_ b: [UInt8], at i: inout Int) throws -> UInt64 {
        guard b.count - i >= 8 else { throw Bad() }
        var v: UInt64 = 0
        for k in 0..<8 { v |= UInt64(b[i + k]) << (8 * UInt64(k)) }
        i += 8
        return v
    }

    static func string(_ b: [UInt8], at i: inout Int) throws -> String {
        let n = try length(b, at: &i)
        defer { i += n }
        guard let s = String(validating: b[i..<i + n], as: UTF8.self) else { throw Bad() }
        return s
    }

    static func read(_ b: [UInt8], at i: inout Int, depth: Int) throws -> KVValue {
        guard i < b.count, depth < KVLimits.maxDepth else { throw Bad() }
        let tag = b[i]; i += 1
        switch tag {
        case 1: return .string(try string(b, at: &i))
        case 2: return .int(Int64(bitPattern: try fixed(b, at: &i)))
        case 3: return .double(Double(bitPattern: try fixed(b, at: &i)))
        case 4, 5: return .bool(tag == 5)
        case 6: return .date(Date(timeIntervalSince1970: Double(bitPattern: try fixed(b, at: &i))))
        case 7:
            let n = try length(b, at: &i)
            defer { i += n }
            return .data(Data(b[i..<i + n]))
        case 8:
            let n = try length(b, at: &i)
            var a: [KVValue] = []
            for _ in 0..<n { a.append(try read(b, at: &i, depth: depth + 1)) }
            return .array(a)
        case 9:
            let n = try length(b, at: &i)
            var d: [String: KVValue] = [:]
            for _ in 0..<n { let k = try string(b, at: &i); d[k] = try read(b, at: &i, depth: depth + 1) }
            return .dictionary(d)
        default: throw Bad()
        }
    }
}
