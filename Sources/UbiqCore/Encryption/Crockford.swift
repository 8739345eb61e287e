/// Crockford's base32, as recovery keys and enrolment codes are shown and typed: digits and
/// upper-case letters without I, L, O, U; read back whatever the case, with dashes and spaces
/// ignored and O, I, L taken for 0, 1, 1.
enum Crockford {
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// `count` symbols from the first `5 × count` bits of `bytes` (at least that many bits plus one byte).
    static func symbols(_ bytes: [UInt8], count: Int) -> String {
        String((0..<count).map { i -> Character in
            let bit = i * 5, byte = bit / 8, shift = bit % 8
            let word = UInt16(bytes[byte]) << 8 | UInt16(bytes[byte + 1])
            return alphabet[Int((word >> (11 - shift)) & 0x1F)]
        })
    }

    /// The symbols of `typed`, or nil when it holds anything else.
    static func read(_ typed: String) -> String? {
        var out = ""
        for ch in typed.uppercased() where ch != "-" && ch != " " {
            let c: Character = ch == "O" ? "0" : (ch == "I" || ch == "L") ? "1" : ch
            guard alphabet.contains(c) else { return nil }
            out.append(c)
        }
        return out
    }
}
