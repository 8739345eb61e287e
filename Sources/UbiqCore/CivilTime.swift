import Foundation

/// The wire's date form, `YYYY-MM-DDTHH:MM:SS.fffZ`, formatted and parsed by arithmetic on the
/// civil calendar (H. Hinnant's days-from-civil) instead of Foundation's calendar machinery: a
/// change page carries three dates per item, and Foundation's ISO-8601 style costs microseconds
/// each. Anything outside the plain UTC form is left to Foundation by the caller.
enum CivilTime {
    enum Parsed: Equatable { case date(Date), invalid, other }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01.
    static func civil(days z0: Int) -> (year: Int, month: Int, day: Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Years the fast path handles. Foundation switches to the Julian calendar before the 1582
    /// reform; older dates are left to it so both forms always agree.
    static let years = 1600...9999

    /// `YYYY-MM-DDTHH:MM:SS.fffZ` of the date rounded to the millisecond; nil outside `years`.
    static func format(_ d: Date) -> String? {
        let t = d.timeIntervalSince1970 * 1000
        guard t.isFinite, abs(t) < 1e15 else { return nil }
        let ms = Int((t).rounded())
        let (secs, frac) = ms.quotientAndRemainder(dividingBy: 1000)
        let whole = secs - (frac < 0 ? 1 : 0), f = frac < 0 ? frac + 1000 : frac
        let (dayCount, sod) = whole.quotientAndRemainder(dividingBy: 86_400)
        let dd = dayCount - (sod < 0 ? 1 : 0), s = sod < 0 ? sod + 86_400 : sod
        let (y, m, day) = civil(days: dd)
        guard Self.years.contains(y) else { return nil }
        var out = [UInt8](repeating: 0, count: 24)
        func put(_ v: Int, _ at: Int, _ width: Int) {
            var v = v
            for i in stride(from: at + width - 1, through: at, by: -1) { out[i] = UInt8(0x30 + v % 10); v /= 10 }
        }
        put(y, 0, 4); out[4] = 0x2D; put(m, 5, 2); out[7] = 0x2D; put(day, 8, 2); out[10] = 0x54
        put(s / 3600, 11, 2); out[13] = 0x3A; put(s / 60 % 60, 14, 2); out[16] = 0x3A; put(s % 60, 17, 2)
        out[19] = 0x2E; put(f, 20, 3); out[23] = 0x5A
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.f…]Z`; `.other` for any other shape (offsets, lower-case
    /// letters, no seconds …), `.invalid` for that shape with impossible fields.
    static func parse(_ s: String) -> Parsed {
        var s = s
        return s.withUTF8 { u -> Parsed in
            guard u.count >= 20, u.count <= 64, u[u.count - 1] == 0x5A else { return .other }
            func num(_ at: Int, _ width: Int) -> Int? {
                var v = 0
                for i in at..<at + width {
                    let c = u[i]
                    guard c >= 0x30 && c <= 0x39 else { return nil }
                    v = v * 10 + Int(c - 0x30)
                }
                return v
            }
            guard u[4] == 0x2D, u[7] == 0x2D, u[10] == 0x54, u[13] == 0x3A, u[16] == 0x3A,
                  let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2), let h = num(11, 2), let mi = num(14, 2), let se = num(17, 2)
            else { return .other }
            guard years.contains(y) else { return .other }
            var fraction = 0.0
            if u.count > 20 {
                guard u[19] == 0x2E, u.count > 21, let _ = num(20, u.count - 21) else { return .other }
                guard let v = Double("0." + String(decoding: UnsafeBufferPointer(rebasing: u[20..<u.count - 1]), as: UTF8.self)) else { return .other }
                fraction = v
            }
            guard (1...12).contains(mo), (1...daysIn(month: mo, year: y)).contains(d), h < 24, mi < 60, se < 60 else { return .invalid }
            let secs = days(year: y, month: mo, day: d) * 86_400 + h * 3600 + mi * 60 + se
            // The same steps as the Foundation path (whole seconds as a Date first), so ties in the
            // rounding to milliseconds fall the same way.
            let whole = Date(timeIntervalSince1970: Double(secs))
            return .date(KVDateFormat.roundedToMillis(Date(timeIntervalSince1970: whole.timeIntervalSince1970 + fraction)))
        }
    }
}
