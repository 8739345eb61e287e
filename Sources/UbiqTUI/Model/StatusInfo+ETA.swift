import Foundation

extension StatusInfo {
    /// Bytes still to move, both ways (queued transfers included).
    public var remainingBytes: Int64 {
        max(0, uploads.bytesTotal - uploads.bytesDone) + max(0, downloads.bytesTotal - downloads.bytesDone)
    }

    /// How long what is left takes at the recent throughput ("12 s", "4 min", "2 h 5 min"); nil
    /// when nothing is left or nothing moved lately (no honest guess).
    public var eta: String? { Self.eta(remaining: remainingBytes, throughput: throughput) }

    public static func eta(remaining: Int64, throughput: Double) -> String? {
        guard remaining > 0, throughput >= 1, throughput.isFinite else { return nil }
        let seconds = (Double(remaining) / throughput).rounded(.up)
        guard seconds < 100 * 3600 else { return "over 99 h" }
        let s = Int(seconds)
        if s < 60 { return "\(max(1, s)) s" }
        if s < 3600 { return "\((s + 59) / 60) min" }
        let m = (s % 3600 + 59) / 60
        return m == 0 || m == 60 ? "\(s / 3600 + (m == 60 ? 1 : 0)) h" : "\(s / 3600) h \(m) min"
    }
}
