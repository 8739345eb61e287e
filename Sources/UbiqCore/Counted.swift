/// A count with its noun, singular or plural as the count needs ("1 item", "3 items") — the
/// front end and the command line said "1 hunk(s) settled" (#44 row 12).
public enum Counted {
    /// `n` and `noun`, with `plural` (else `noun` + "s") unless `n` is 1.
    public static func of(_ n: Int, _ noun: String, plural: String? = nil) -> String {
        "\(n) \(n == 1 ? noun : plural ?? noun + "s")"
    }
}
