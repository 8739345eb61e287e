import Foundation

/// Parses and prints byte sizes such as `5GiB`, `10MB`, `512k`, `1234`.
public enum ByteSize {
    /// Decimal units (`KB`, `MB`, `GB`, `TB`) are powers of 1000, binary (`KiB`, `K`, …) powers of 1024.
    public static func parse(_ text: String) throws -> Int64 {
        let s = text.trimmingCharacters(in: .whitespaces)
        let digits = s.prefix { $0.isNumber || $0 == "." }
        let unit = s.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        guard let n = Double(digits), n >= 0 else { throw CoreError(.invalidValue, "not a size: '\(text.prefix(40))'") }
        let mult: Double
        switch unit {
        case "", "b": mult = 1
        case "kb": mult = 1e3
        case "mb": mult = 1e6
        case "gb": mult = 1e9
        case "tb": mult = 1e12
        case "k", "kib": mult = 1024
        case "m", "mib": mult = 1_048_576
        case "g", "gib": mult = 1_073_741_824
        case "t", "tib": mult = 1_099_511_627_776
        default: throw CoreError(.invalidValue, "unknown size unit '\(unit.prefix(10))' in '\(text.prefix(40))' (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)")
        }
        let v = n * mult
        guard v < 9e18 else { throw CoreError(.invalidValue, "size too large: '\(text.prefix(40))'") }
        return Int64(v.rounded())
    }

    /// A short human form: `1.5 MiB`.
    public static func format(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var v = Double(bytes)
        var i = 0
        while v >= 1024 && i < units.count - 1 { v /= 1024; i += 1 }
        return i == 0 ? "\(bytes) B" : String(format: "%.1f %@", v, units[i])
    }
}

